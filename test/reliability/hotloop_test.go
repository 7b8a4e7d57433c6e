package reliability_test

import (
	"strings"
	"testing"
	"time"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// idleWindow is how long the manager is watched doing nothing, and
// idleBound how many requests it may make meanwhile besides keeping its
// leader lease: a few resyncs' worth, far below any retry loop (a job
// retried with a 1 s backoff alone would make 60).
const (
	idleWindow = 60 * time.Second
	idleBound  = 20
)

// TestManagerIsQuietWhenNothingHappens: with every job left as the
// bad-input rows leave it — waiting for a queue, a class, a runtime; held;
// refused; complete — the manager makes almost no requests. A hot loop (a
// reconcile that fails and requeues, a write that never settles) shows as
// hundreds. It needs those jobs whatever order the tests run in: when no
// row has left one (the table runs after it, or was left out), it runs the
// table first.
func TestManagerIsQuietWhenNothingHappens(t *testing.T) {
	if jobsLeftByRows(t) == 0 {
		// One subtest holds the table, so its parallel rows are done when
		// t.Run returns.
		t.Run("bad-input", badInputTable)
		if t.Failed() {
			t.Fatal("the rows that leave jobs at rest failed: nothing to measure")
		}
	}
	localcluster.AssertQuiet(t, cluster.AuditLog(), idleWindow, idleBound)
}

// jobsLeftByRows counts the TrainJobs of the rows' namespaces (rel-…).
func jobsLeftByRows(t *testing.T) int {
	t.Helper()
	var jobs trainer.TrainJobList
	if err := k8s.List(ctx, &jobs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range jobs.Items {
		if strings.HasPrefix(j.Namespace, "rel-") {
			n++
		}
	}
	return n
}
