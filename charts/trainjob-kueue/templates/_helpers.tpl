{{/* A file of the kustomize tree (config/), in the release namespace. */}}
{{- define "trainjob-kueue.file" -}}
{{ .root.Files.Get .path | replace "namespace: trainjob-kueue-system" (printf "namespace: %s" .root.Release.Namespace) }}
{{- end }}

{{/* The manager's image: the tag defaults to the chart's appVersion. */}}
{{- define "trainjob-kueue.image" -}}
{{- if not .Values.image.repository }}{{ fail "image.repository must be set" }}{{ end -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
