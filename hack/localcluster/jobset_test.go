package localcluster

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The JobSet each Trainer release runs with is written twice, in
// hack/component.sh (which builds it) and in jobsetFor (which starts it):
// the two say the same, and a tools module exists for each pin.
func TestTheJobSetPinsOfComponentShAndJobsetForAgree(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "component.sh"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(script), "jobset_for() {")
	if start < 0 {
		t.Fatal("hack/component.sh has no jobset_for")
	}
	body, _, _ := strings.Cut(string(script)[start:], "esac")
	pins := map[string]string{}
	for _, m := range regexp.MustCompile(`(v[0-9.]+)\) echo (v[0-9.]+) ;;`).FindAllStringSubmatch(body, -1) {
		pins[m[1]] = m[2]
	}
	if len(pins) == 0 {
		t.Fatal("no pin read from hack/component.sh's jobset_for")
	}
	ours := map[string]string{}
	for trainer := range pins {
		ours[trainer] = jobsetFor(trainer)
	}
	for _, trainer := range []string{"v2.0.1", "v2.1.0", "v2.2.0", "v2.3.0"} {
		if _, ok := pins[trainer]; !ok {
			t.Errorf("hack/component.sh pins no JobSet for Trainer %s", trainer)
		}
	}
	if diff := cmp.Diff(pins, ours); diff != "" {
		t.Errorf("JobSet pins (-hack/component.sh +jobsetFor):\n%s", diff)
	}
	for _, js := range pins {
		if _, err := os.Stat(filepath.Join("..", "tools", "jobset-"+js, "go.mod")); err != nil {
			t.Errorf("JobSet %s is pinned, and has no tools module: %v", js, err)
		}
	}
}
