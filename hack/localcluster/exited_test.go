package localcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// A failed suite's report names the component that exited and ends with
// its log's last lines; a running one is not reported.
func TestReportExitedEndsWithTheLogOfEachExitedComponent(t *testing.T) {
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: t.TempDir(), state: &state{PIDs: map[string]int{
		"jobset-controller-manager": done.Process.Pid,
		"kube-apiserver":            os.Getpid(),
	}}}
	if err := os.MkdirAll(filepath.Join(c.Dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	log := "started\nleader election lost\nexiting\n"
	if err := os.WriteFile(c.LogFile("jobset-controller-manager"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	c.ReportExited(&out, 2)
	want := filepath.Base(c.Dir) + ": jobset-controller-manager is not running; the end of its log:\n  leader election lost\n  exiting\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}
