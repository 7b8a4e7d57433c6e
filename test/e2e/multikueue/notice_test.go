package multikueue_test

import (
	"testing"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// A worker ClusterQueue's preemption notice cannot hold for a job
// MultiKueue dispatched there: the manager cluster's Kueue answers the
// eviction of the worker's Workload by deleting the job from the worker
// within seconds (measured: 1.2 s). So the job is stopped at once, as
// without a notice, and told why on the worker instead of being promised
// a time it does not get; it is queued again on the manager and runs once
// the arrival that preempted it is done.
func TestAWorkersNoticeIsNotPromisedToADispatchedJob(t *testing.T) {
	t.Parallel()
	ns := setUp(t, capacity{quotaGPUs: 4, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Second)
	priorityRuntimes(t, ns)
	annotateQueue(t, worker1, ns, `{"notice":{"seconds":300}}`)
	victim := fixtures.TrainJob(ns, "victim", "long", "lq")
	createAll(t, manager, victim)
	podsRunOn(t, worker1, victim, 1)
	arrival := fixtures.TrainJob(ns, "arrival", "short", "lq")
	createAll(t, manager, arrival)

	eventually(t, dispatch, "the victim told on "+worker1.name+" that no notice holds there", func() error {
		return fixtures.EventOn(ctx, worker1, victim, "PreemptionNoticeNotHeld", "dispatched here by MultiKueue")
	})
	if err := fixtures.EventOn(ctx, worker1, victim, "PreemptionNotice", "lets it run until"); err == nil {
		t.Errorf("the victim on %s was promised a notice", worker1.name)
	}
	fixtures.WaitComplete(t, ctx, manager, arrival, dispatch)
	podsRunOn(t, worker1, victim, 1)
}
