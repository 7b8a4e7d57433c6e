package multikueue

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

// Reasons of the events and conditions this package writes. Stable: users
// and alerts match on them.
const (
	// ReasonDispatchHeld: a dispatched job's Workload is held on a worker
	// that cannot run it; the event on the manager's TrainJob names the
	// worker and why.
	ReasonDispatchHeld = "DispatchHeldOnWorker"
	// ReasonNameTakenOnWorker: a TrainJob of the dispatched job's name
	// already exists on the worker and was not made for this Workload;
	// MultiKueue cannot create its copy there.
	ReasonNameTakenOnWorker = lifecycle.ReasonNameTakenOnWorker
	// ReasonCopyRefusedOnWorker: the worker's API server refuses the copy
	// MultiKueue would create (its runtime missing there, a webhook or
	// policy of the worker).
	ReasonCopyRefusedOnWorker = lifecycle.ReasonCopyRefusedOnWorker
	// ReasonHoldReleased: what held the Workload on the worker is gone;
	// it is queued there again.
	ReasonHoldReleased = "DispatchHoldReleased"
)

// actionQueue is the events' action: what we did is about queueing.
const actionQueue = "Queue"

// finished: Kueue is done with the Workload.
func finished(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}
