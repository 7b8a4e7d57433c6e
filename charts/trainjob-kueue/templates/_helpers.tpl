{{/* A file of the kustomize tree (config/), in the release namespace and
naming the certificate Secret the values choose (the Role's resourceNames). */}}
{{- define "trainjob-kueue.file" -}}
{{ .root.Files.Get .path | replace "trainjob-kueue-system" .root.Release.Namespace | replace "trainjob-kueue-webhook-server-cert" .root.Values.webhook.certSecretName }}
{{- end }}

{{/* The manager's image: the tag defaults to the chart's appVersion. */}}
{{- define "trainjob-kueue.image" -}}
{{- if not .Values.image.repository }}{{ fail "image.repository must be set" }}{{ end -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The metrics port, from metrics.bindAddress; empty when metrics are off ("0"). */}}
{{- define "trainjob-kueue.metricsPort" -}}
{{- $addr := toString .Values.metrics.bindAddress }}
{{- if ne $addr "0" }}
{{- $port := regexReplaceAll "^.*:" $addr "" }}
{{- if not (regexMatch "^[0-9]+$" $port) }}{{ fail (printf "metrics.bindAddress %q: want [host]:port, or 0" $addr) }}{{ end }}
{{- $port }}
{{- end }}
{{- end }}
