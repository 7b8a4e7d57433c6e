package podsets_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The pure core takes data and returns data: none of its packages may link
// a client, controller machinery or Kueue's process state (its feature
// gates live in sigs.k8s.io/kueue/pkg/features). What the installed Kueue
// decides is given to it (Options).
func TestThePureCoreLinksNoClientAndNoKueueProcessState(t *testing.T) {
	forbidden := []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "sigs.k8s.io/kueue/pkg/"}
	for _, pkg := range []string{"../podsets", "../quota", "../shape", "../preemptcost"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}
