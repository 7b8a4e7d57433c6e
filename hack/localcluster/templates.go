package localcluster

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"text/template"
)

// templates hold the components' configuration files, filled in per
// cluster (ports, paths, namespaces).
//
//go:embed templates/*.yaml
var templates embed.FS

// writeTemplate renders templates/<name> with data to path.
func writeTemplate(name, path string, data any) error {
	t, err := template.New(name).Option("missingkey=error").ParseFS(templates, "templates/"+name)
	if err != nil {
		return fmt.Errorf("template %s: %w", name, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return fmt.Errorf("template %s: %w", name, err)
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}
