package metrics

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The chart's dashboard and alerts query only metrics the manager exports:
// a renamed metric would leave a panel empty and an alert silent.
func TestTheChartsDashboardAndAlertsNameOnlyExportedMetrics(t *testing.T) {
	exported := map[string]bool{}
	reg := prometheus.NewRegistry()
	if err := NewMetrics().Register(reg, &cacheReader{jobs: []*trainjob.TrainJob{jobIn("Queued", 0)}}); err != nil {
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
	go func() { NewMetrics().describe(descs); close(descs) }()
	for d := range descs {
		exported[descName(d)] = true
	}
	// controller-runtime's, which the manager serves from its registry:
	// named in the source of the release linked.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/controller-runtime").Output()
	if err != nil {
		t.Fatal(err)
	}
	crSource := controllerRuntimeMetricNames(t, strings.TrimSpace(string(out)))
	name := regexp.MustCompile(`\b(trainjob_kueue_[a-z_]+|controller_runtime_[a-z_]+|rest_client_[a-z_]+|leader_election_[a-z_]+)\b`)
	for _, file := range []string{"../charts/trainjob-kueue/files/monitoring/dashboard.json", "../charts/trainjob-kueue/templates/monitoring.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, n := range name.FindAllString(string(data), -1) {
			n = strings.TrimSuffix(n, "_bucket")
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			t.Errorf("%s names no metric", file)
		}
		for _, n := range names {
			if !exported[n] && !crSource[n] {
				t.Errorf("%s queries %s, which the manager does not export", file, n)
			}
		}
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
