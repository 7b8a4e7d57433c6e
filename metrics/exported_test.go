package metrics

import (
	"flag"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

var update = flag.Bool("update", false, "rewrite testdata/exported.txt")

// testdata/exported.txt lists every metric the manager serves: its own and
// controller-runtime's (with client-go's it registers). The chart's test
// (test/install) parses each dashboard query and alert with PromQL's parser
// and checks every metric it names against this list, so a renamed metric
// cannot leave a panel empty or an alert silent; this test keeps the list
// true. `go test ./metrics/ -update` rewrites it.
func TestExportedMetricsAreListed(t *testing.T) {
	exported := map[string]bool{}
	reg := prometheus.NewRegistry()
	if err := NewMetrics().Register(reg, &cacheReader{jobs: []*trainjob.TrainJob{jobIn("Queued", 0)}}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(NewClientThrottle()); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		exported[f.GetName()] = true
	}
	// Families with no sample yet are not gathered: the manager's own are
	// all described.
	descs := make(chan *prometheus.Desc, 64)
	go func() { NewMetrics().describe(descs); NewClientThrottle().Describe(descs); close(descs) }()
	for d := range descs {
		exported[descName(d)] = true
	}
	// controller-runtime's, which the manager serves from its registry:
	// named in the source of the release linked.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/controller-runtime").Output()
	if err != nil {
		t.Fatal(err)
	}
	for n := range controllerRuntimeMetricNames(t, strings.TrimSpace(string(out))) {
		// Metric names are namespaced (a_b); other Name fields are not.
		if strings.Contains(n, "_") {
			exported[n] = true
		}
	}
	want := strings.Join(slices.Sorted(maps.Keys(exported)), "\n") + "\n"
	const file = "testdata/exported.txt"
	if *update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("%s is out of date (-exported +listed); run go test ./metrics/ -update:\n%s", file, diff)
	}
}

// controllerRuntimeMetricNames are the metric names controller-runtime's
// packages under dir declare.
func controllerRuntimeMetricNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	declared := regexp.MustCompile(`Name:\s*"([a-z_]+)"`)
	names := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(dir, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range declared.FindAllStringSubmatch(string(data), -1) {
			names[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// descName is a Desc's fully-qualified name.
func descName(d *prometheus.Desc) string {
	s := d.String()
	_, rest, _ := strings.Cut(s, `fqName: "`)
	n, _, _ := strings.Cut(rest, `"`)
	return n
}

// A manager restarted in the same process (a mode change) registers its
// metrics anew on the same registry: what the first one registered is
// taken off, or the second registration fails and the manager with it.
func TestMetricsRegisterAgainAfterUnregister(t *testing.T) {
	reg := prometheus.NewRegistry()
	first := NewMetrics()
	if err := first.Register(reg, &cacheReader{}); err != nil {
		t.Fatal(err)
	}
	if err := NewMetrics().Register(reg, &cacheReader{}); err == nil {
		t.Fatal("registered twice on one registry: the test shows nothing")
	}
	first.Unregister(reg)
	if err := NewMetrics().Register(reg, &cacheReader{}); err != nil {
		t.Errorf("registering after Unregister: %v", err)
	}
}
