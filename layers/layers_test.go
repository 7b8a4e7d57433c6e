package layers

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers of the repository's packages, lowest first: a package imports
// only packages of lower layers, so the graph has no cycle and no upward
// edge (docs/development.md says where a new feature goes).
var layers = [][]string{
	{"names", "trainjob", "saidonce", "paging"},
	{"podsets", "scheme", "jobworkload"},
	{"quota", "shape", "preemptcost"},
	{"lifecycle", "forecast"},
	{"gang", "runtimesource", "discovery", "metrics", "jobpatch"},
	{"settings"},
	{"integration", "multikueue", "priorityboost", "queuecondition", "informercache", "restartwatch", "standby"},
	{"webhook", "explain", "overview", "migrate", "restart"},
	{"cmd/trainjob-kueue", "cmd/kubectl-trainjob_kueue"},
}

const module = "github.com/trainjob-kueue/trainjob-kueue/"

// violations are the imports of graph (a package's path in the module →
// the module's packages it imports) that break the rule: a layered
// package importing one of its own layer or above, or a tool or tier;
// a package without a layer; a tool (hack/) importing a tier (test/) or
// a benchmark (bench/).
func violations(graph map[string][]string) []string {
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layerOf[p] = i
		}
	}
	var out []string
	for pkg, imports := range graph {
		hack := strings.HasPrefix(pkg, "hack/")
		// The tiers (test/), the benchmarks (bench/) and the examples'
		// tests (examples/) stand above everything, and may use the tools.
		test := aboveAll(pkg)
		switch {
		case pkg == "layers":
			continue
		case hack:
			for _, dep := range imports {
				if aboveAll(dep) {
					out = append(out, pkg+" (a tool) imports "+dep+" (a tier or a benchmark): test/ and bench/ may import hack/, never the other way; move what both need into hack/")
				}
			}
			continue
		case test:
			continue // the tiers stand above everything
		}
		from, ok := layerOf[pkg]
		if !ok {
			out = append(out, "package "+pkg+" has no layer: add it to layers (and to docs/development.md)")
			continue
		}
		for _, dep := range imports {
			if to, ok := layerOf[dep]; !ok || to >= from {
				out = append(out, pkg+" imports "+dep+": only lower layers may be imported")
			}
		}
	}
	slices.Sort(out)
	return out
}

// aboveAll: a tier (test/), a benchmark (bench/) or an example's test
// (examples/), which nothing imports.
func aboveAll(pkg string) bool {
	return strings.HasPrefix(pkg, "test/") || strings.HasPrefix(pkg, "bench/") || strings.HasPrefix(pkg, "examples/")
}

func TestPackagesImportOnlyLowerLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, ":")
		var ours []string
		for _, imp := range strings.Fields(imports) {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				ours = append(ours, dep)
			}
		}
		graph[strings.TrimPrefix(path, module)] = ours
	}
	if len(graph) < 20 {
		t.Fatalf("go list found %d packages: the test reads the wrong tree", len(graph))
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// The rule itself: each kind of violation is found, and a tree that keeps
// it has none.
func TestTheLayerRuleFindsEachViolation(t *testing.T) {
	for name, tc := range map[string]struct {
		graph map[string][]string
		want  int
	}{
		"down the layers, test/ on hack/": {graph: map[string][]string{"webhook": {"integration", "trainjob"}, "test/e2e": {"hack/localcluster", "webhook"}, "bench/sidebyside": {"hack/fixtures", "integration"}}},
		"a tool importing a tier":         {graph: map[string][]string{"hack/demo": {"test/fixtures"}}, want: 1},
		"a tool importing a benchmark":    {graph: map[string][]string{"hack/demo": {"bench/loadharness"}}, want: 1},
		"a tool importing an example":     {graph: map[string][]string{"hack/demo": {"examples/preemption-notice"}}, want: 1},
		"up the layers":                   {graph: map[string][]string{"trainjob": {"integration"}}, want: 1},
		"within a layer":                  {graph: map[string][]string{"integration": {"priorityboost"}}, want: 1},
		"a package without a layer":       {graph: map[string][]string{"newthing": nil}, want: 1},
		"a package importing a tool":      {graph: map[string][]string{"webhook": {"hack/fixtures"}}, want: 1},
	} {
		t.Run(name, func(t *testing.T) {
			if got := violations(tc.graph); len(got) != tc.want {
				t.Errorf("violations %q, want %d", got, tc.want)
			}
		})
	}
}
