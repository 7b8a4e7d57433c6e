// Command helmrender renders the chart as `helm install -n NAMESPACE` would,
// with its default values but the image and any -set, for the as-deployed e2e
// (test/e2e/deployed, DEPLOYED_FROM=helm). The Helm SDK stays in this
// module, out of the manager's.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

func main() {
	chart := flag.String("chart", "charts/trainjob-kueue", "the chart's directory")
	namespace := flag.String("namespace", "trainjob-kueue-system", "the release namespace")
	image := flag.String("image", "", "REPOSITORY:TAG of the manager's image; the chart's defaults when empty")
	out := flag.String("o", "-", "output file")
	var sets setFlags
	flag.Var(&sets, "set", "KEY=VALUE on top of values.yaml, KEY dotted (webhook.certSecretName=x); repeatable")
	flag.Parse()
	if err := run(*chart, *namespace, *image, sets, *out); err != nil {
		fmt.Fprintf(os.Stderr, "helmrender: %v\n", err)
		os.Exit(1)
	}
}

// setFlags are -set KEY=VALUE flags, as helm's --set for plain strings.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, ",") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// into sets each KEY=VALUE into values, creating the maps on the way.
func (s setFlags) into(values map[string]any) error {
	for _, kv := range s {
		key, value, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			return fmt.Errorf("-set %q: want KEY=VALUE", kv)
		}
		m, path := values, strings.Split(key, ".")
		for _, p := range path[:len(path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[path[len(path)-1]] = value
	}
	return nil
}

func run(chartDir, namespace, image string, sets setFlags, out string) error {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return fmt.Errorf("loading the chart: %w", err)
	}
	values := map[string]any{}
	if image != "" {
		i := strings.LastIndex(image, ":")
		if i < 0 {
			return fmt.Errorf("-image %q: want REPOSITORY:TAG", image)
		}
		values["image"] = map[string]any{"repository": image[:i], "tag": image[i+1:]}
	}
	if err := sets.into(values); err != nil {
		return err
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "trainjob-kueue", Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return fmt.Errorf("rendering the chart: %w", err)
	}
	// `helm install --create-namespace` makes the release namespace.
	var all bytes.Buffer
	fmt.Fprintf(&all, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", namespace)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, ".yaml") && strings.TrimSpace(files[name]) != "" {
			all.WriteString("---\n" + files[name] + "\n")
		}
	}
	if out == "-" {
		_, err = os.Stdout.Write(all.Bytes())
		return err
	}
	return os.WriteFile(out, all.Bytes(), 0o644)
}
