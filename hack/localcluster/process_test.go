package localcluster

import (
	"io"
	"testing"
	"time"
)

// A component that outlasts its SIGTERM grace is gone when stopAll returns:
// a restart starts its successor at once, and a successor that found it
// still running failed the switch (CI: "kueue is running (pid …)").
func TestStopAllReturnsOnceAStubbornProcessIsGone(t *testing.T) {
	dir := t.TempDir()
	// Ignores SIGTERM; its sleep does not, so the shell waits for nothing
	// but its own SIGKILL.
	pid, err := startProcess(dir, "stubborn", nil, "/bin/sh", "-c", `trap "" TERM; while :; do sleep 1; done`)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the trap is set
	stopWithin(map[string]int{"stubborn": pid}, io.Discard, 100*time.Millisecond)
	if alive(pid) {
		t.Fatalf("pid %d still running when stopAll returned", pid)
	}
}
