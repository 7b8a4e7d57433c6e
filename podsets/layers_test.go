package podsets_test

import (
	"os/exec"
	"strings"
	"testing"
)

// layers of the repository's packages, lowest first: a package imports
// only packages of lower layers, so the graph has no cycle and no upward
// edge (docs/development.md says where a new feature goes).
var layers = [][]string{
	{"names", "trainjob", "saidonce"},
	{"podsets", "scheme"},
	{"quota", "shape", "preemptcost"},
	{"gang", "runtimesource", "discovery", "metrics", "jobworkload", "onepass"},
	{"integration", "multikueue", "priorityboost", "informercache", "restartwatch"},
	{"webhook", "explain", "overview", "migrate"},
	{"cmd/trainjob-kueue", "cmd/kubectl-trainjob_kueue"},
}

func TestPackagesImportOnlyLowerLayers(t *testing.T) {
	const module = "github.com/trainjob-kueue/trainjob-kueue/"
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layerOf[p] = i
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, ":")
		pkg := strings.TrimPrefix(path, module)
		if strings.HasPrefix(pkg, "hack/") || strings.HasPrefix(pkg, "test/") {
			continue // tools and tests stand above everything
		}
		from, ok := layerOf[pkg]
		if !ok {
			t.Errorf("package %s has no layer: add it to layers (and to docs/development.md)", pkg)
			continue
		}
		for _, imp := range strings.Fields(imports) {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if to, ok := layerOf[dep]; !ok || to >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): only lower layers may be imported", pkg, from, dep, to)
			}
		}
	}
}
