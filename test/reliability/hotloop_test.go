package reliability_test

import (
	"testing"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/test/localcluster"
)

// idleWindow is how long the manager is watched doing nothing, and
// idleBound how many requests it may make meanwhile besides keeping its
// leader lease: a few resyncs' worth, far below any retry loop (a job
// retried with a 1 s backoff alone would make 60).
const (
	idleWindow = 60 * time.Second
	idleBound  = 20
)

// TestManagerIsQuietWhenNothingHappens runs after the tiers above (go test
// runs a file's tests in order, files by name: put it last with -run, or run
// the package): with every job left as the rows left it — waiting for a
// queue, a class, a runtime; refused; complete — the manager makes almost
// no requests. A hot loop (a reconcile that fails and requeues, a write
// that never settles) shows as hundreds.
func TestManagerIsQuietWhenNothingHappens(t *testing.T) {
	// Let what the earlier tests set in motion settle.
	time.Sleep(10 * time.Second)
	start := time.Now()
	time.Sleep(idleWindow)
	end := time.Now()
	n, summary, err := localcluster.IdleRequests(cluster.AuditLog(), start, end)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the manager's requests in %v of idle (leases aside): %d\n%s", idleWindow, n, summary)
	if n > idleBound {
		t.Errorf("the manager made %d requests in %v with nothing to do, want at most %d: a hot loop (most frequent first above)", n, idleWindow, idleBound)
	}
}
