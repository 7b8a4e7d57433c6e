package integration

import (
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// decisionPriority is the work-queue priority of a job whose Workload Kueue
// just decided on (admitted: start it; evicted or deactivated: stop it), or
// whose Workload holds quota and changed. Everything else is queued at the
// default, 0.
const decisionPriority = 10

// urgent adds at decisionPriority (at least) whatever is added to it, also
// through the wrappers handlers put around it.
type urgent struct {
	priorityqueue.PriorityQueue[reconcile.Request]
}

func (u urgent) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if ptr.Deref(o.Priority, 0) < decisionPriority {
		o.Priority = ptr.To(decisionPriority)
	}
	u.PriorityQueue.AddWithOpts(o, items...)
}

func (u urgent) Add(r reconcile.Request) { u.AddWithOpts(priorityqueue.AddOpts{}, r) }

func (u urgent) AddAfter(r reconcile.Request, after time.Duration) {
	u.AddWithOpts(priorityqueue.AddOpts{After: after}, r)
}

func (u urgent) AddRateLimited(r reconcile.Request) {
	u.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, r)
}
