package localcluster

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// read is a file of the repository, from this package's directory.
func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The Makefile's defaults are the table's, and every release its lists
// name (the smokes, test-full, the bench, the demo) is one the table has.
func TestTheMakefileRunsTheReleasesOfTheTable(t *testing.T) {
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(?:[\w-]+:\s*)?([A-Z_]+)\s*\??=\s*(.*)$`).FindAllStringSubmatch(read(t, "Makefile"), -1) {
		vars[m[1]] += " " + m[2]
	}
	for name, want := range map[string]string{"KUBERNETES_VERSION": DefaultKubernetesVersion, "KUEUE_VERSION": DefaultKueueVersion} {
		if got := strings.Fields(vars[name]); len(got) == 0 || got[0] != want {
			t.Errorf("Makefile: %s ?= %v; want %s, the table's default", name, got, want)
		}
	}
	if got := strings.Fields(vars["TRAINER_VERSION"]); !slices.Contains(got, DefaultTrainerVersion) {
		t.Errorf("Makefile: TRAINER_VERSION %v; want its default %s, the table's", got, DefaultTrainerVersion)
	}
	kinds := []struct {
		inName, pattern string
		known           []string
	}{
		{"TRAINER", `v2\.\d+\.\d+`, slices.Collect(maps.Keys(TrainerReleases()))},
		{"KUEUE", `v0\.\d+\.\d+`, KueueReleases()},
		{"KUBE", `v1\.\d+\.\d+`, KubernetesReleases()},
	}
	seen := 0
	for name, value := range vars {
		for _, k := range kinds {
			if !strings.Contains(name, k.inName) {
				continue
			}
			for _, v := range regexp.MustCompile(k.pattern).FindAllString(value, -1) {
				seen++
				if !slices.Contains(k.known, v) {
					t.Errorf("Makefile: %s names %s, which the release table (hack/localcluster/releases.go) does not have", name, v)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("found %d releases in the Makefile's variables: the test reads the wrong file", seen)
	}
}

// hack/component.sh builds what the table has: its defaults, Trainer's
// releases with their JobSet, the control plane's releases.
func TestComponentShBuildsTheReleasesOfTheTable(t *testing.T) {
	script := read(t, "hack/component.sh")
	for name, want := range map[string]string{"KUBE_VERSION": DefaultKubernetesVersion, "KUEUE_VERSION": DefaultKueueVersion, "TRAINER_VERSION": DefaultTrainerVersion} {
		m := regexp.MustCompile(`(?m)^` + name + `=\$\{` + name + `:-(\S+)\}$`).FindStringSubmatch(script)
		if m == nil || m[1] != want {
			t.Errorf("hack/component.sh: %s's default %v; want %s", name, m, want)
		}
	}
	jobsets := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(v2\.\d+\.\d+)\) echo (v0\.\d+\.\d+) ;;$`).FindAllStringSubmatch(script, -1) {
		jobsets[m[1]] = m[2]
	}
	if diff := cmp.Diff(TrainerReleases(), jobsets); diff != "" {
		t.Errorf("hack/component.sh's Trainer releases and their JobSet (-table +script):\n%s", diff)
	}
	var kube []string
	for _, m := range regexp.MustCompile(`(?m)^\s+(v1\.\d+\.\d+)\) echo \S+ ;;$`).FindAllStringSubmatch(script, -1) {
		kube = append(kube, m[1])
	}
	if diff := cmp.Diff(KubernetesReleases(), kube); diff != "" {
		t.Errorf("hack/component.sh's Kubernetes releases (-table +script):\n%s", diff)
	}
}

// README's table of supported versions has a column for each Trainer
// release line and a row for each Kueue release, the default said.
func TestTheReadmeTellsTheReleasesOfTheTable(t *testing.T) {
	readme := read(t, "README.md")
	start := strings.Index(readme, "## Supported versions")
	if start < 0 {
		t.Fatal("README.md has no Supported versions section")
	}
	section := readme[start:]
	if end := strings.Index(section[3:], "\n## "); end > 0 {
		section = section[:end+3]
	}
	for v := range TrainerReleases() {
		line := v[:strings.LastIndex(v, ".")] // v2.2.0 → v2.2, which the table may write v2.2.x
		if !strings.Contains(section, "Trainer "+v) && !strings.Contains(section, "Trainer "+line+".x") {
			t.Errorf("README.md's supported versions name no Trainer %s", v)
		}
	}
	for _, v := range KueueReleases() {
		row := "**Kueue " + v + "**"
		if v == DefaultKueueVersion {
			row += " (default)"
		}
		if !strings.Contains(section, row) {
			t.Errorf("README.md's supported versions have no row %q", row)
		}
	}
	if !strings.Contains(section, "Kubernetes "+DefaultKubernetesVersion) {
		t.Errorf("README.md's supported versions do not say the cluster runs Kubernetes %s", DefaultKubernetesVersion)
	}
}

// A cluster runs, unless told, the Kueue release the manager links.
func TestTheDefaultKueueIsTheOneTheManagerLinks(t *testing.T) {
	m := regexp.MustCompile(`(?m)^\s+sigs\.k8s\.io/kueue (v\S+)$`).FindStringSubmatch(read(t, "go.mod"))
	if m == nil || m[1] != DefaultKueueVersion {
		t.Errorf("go.mod requires Kueue %v; the cluster's default is %s", m, DefaultKueueVersion)
	}
}
