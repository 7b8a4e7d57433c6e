package integration

import (
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// decisionPriority is the work-queue priority of a job whose Workload Kueue
// just decided on (admitted: start it; evicted or deactivated: stop it), or
// whose Workload holds quota and changed. arrivalPriority is a job's that
// just arrived: its first reconcile creates its Workload. Everything else
// (the status of jobs queued or running) is queued at the default, 0. A
// start goes before an arrival: in a burst of arrivals the jobs Kueue
// admits meanwhile still start at once.
const (
	decisionPriority = 10
	arrivalPriority  = 5
)

// ahead adds at priority `at` (at least) whatever is added to it, also
// through the wrappers handlers put around it.
type ahead struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	at int
}

// urgent is ahead at decisionPriority.
func urgent(pq priorityqueue.PriorityQueue[reconcile.Request]) ahead {
	return ahead{PriorityQueue: pq, at: decisionPriority}
}

func (u ahead) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if ptr.Deref(o.Priority, 0) < u.at {
		o.Priority = ptr.To(u.at)
	}
	u.PriorityQueue.AddWithOpts(o, items...)
}

func (u ahead) Add(r reconcile.Request) { u.AddWithOpts(priorityqueue.AddOpts{}, r) }

func (u ahead) AddAfter(r reconcile.Request, after time.Duration) {
	u.AddWithOpts(priorityqueue.AddOpts{After: after}, r)
}

func (u ahead) AddRateLimited(r reconcile.Request) {
	u.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, r)
}
