package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A stopped set-up keeps the end of each component's log, where the reason
// it stopped is.
func TestAStoppedSetUpKeepsTheEndOfEachLog(t *testing.T) {
	from, to := t.TempDir(), filepath.Join(t.TempDir(), "intree-logs")
	long := strings.Repeat("reconciling\n", 100) + "leader election lost\n"
	if err := os.WriteFile(filepath.Join(from, "kueue.log"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(from, "kwok.log"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := copyTails(from, to, 32); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"kueue.log": long[len(long)-32:],
		"kwok.log":  "ok\n",
	} {
		got, err := os.ReadFile(filepath.Join(to, name))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("%s kept (-want +got):\n%s", name, diff)
		}
	}
}

// A set-up one of whose components exited counts as unfinished, naming it.
func TestAnExitedComponentStopsTheSetUp(t *testing.T) {
	states := withExited(map[string]int{stateQueued: 89}, []string{"kueue"})
	if got := unfinishedCount(states); got != 90 {
		t.Errorf("unfinishedCount = %d, want 90", got)
	}
	if got, want := describeStates(states), "1 process exited: kueue, 89 queued, never admitted"; got != want {
		t.Errorf("describeStates = %q, want %q", got, want)
	}
}
