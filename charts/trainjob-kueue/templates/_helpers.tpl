{{/* A file of the kustomize tree (config/), in the release namespace. */}}
{{- define "trainjob-kueue.file" -}}
{{ .root.Files.Get .path | replace "namespace: trainjob-kueue-system" (printf "namespace: %s" .root.Release.Namespace) }}
{{- end }}
