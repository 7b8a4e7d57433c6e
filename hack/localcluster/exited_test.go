package localcluster

import (
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExitedNamesTheComponentsThatAreNoLongerRunning(t *testing.T) {
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: t.TempDir(), state: &state{PIDs: map[string]int{
		"kueue":          done.Process.Pid,
		"kube-apiserver": os.Getpid(),
	}}}
	if diff := cmp.Diff([]string{"kueue"}, c.Exited()); diff != "" {
		t.Errorf("Exited (-want +got):\n%s", diff)
	}
}
