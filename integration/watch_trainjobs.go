package integration

import (
	"context"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/kueue/pkg/controller/constants"
)

// startedUnderKueue: an update of a TrainJob that changed (not a resync),
// is queued in Kueue and runs, or was stopped and still has pods. Its
// reconciles finish the job and give the quota back (Finished on the
// Workload when the job completes; the reservation cleared once a
// preempted job's pods are gone), or report its pods ready and
// reclaimable: like those of a Workload that holds quota, they go ahead of
// the queued jobs, and the jobs they are for are bounded by the quota. A
// TrainJob without a queue runs outside Kueue, unbounded, and stays at the
// default priority.
func startedUnderKueue(e event.UpdateEvent, manageWithoutQueueName bool) bool {
	old, oldOK := e.ObjectOld.(*trainjob.TrainJob)
	job, newOK := e.ObjectNew.(*trainjob.TrainJob)
	if !oldOK || !newOK || old.ResourceVersion == job.ResourceVersion {
		return false
	}
	if !manageWithoutQueueName && job.Labels[constants.QueueLabel] == "" {
		return false
	}
	return !ptr.Deref(job.Spec.Suspend, false) || hasActivePods(old) || hasActivePods(job)
}

// route of a TrainJob's update into the controller's queue.
type route int

const (
	// routeNone: the update is not reconciled.
	routeNone route = iota
	// routeDefault: reconciled in turn (the For watch).
	routeDefault
	// routeFirst: reconciled ahead of the queued jobs (startedUnderKueue).
	routeFirst
)

// routeOf an update. Our queue condition's write alone
// (lifecycle.OnlyToldChanged) goes nowhere: the job framework never reads
// it, and each queued job gets one.
func routeOf(e event.UpdateEvent, manageWithoutQueueName bool) route {
	old, oldOK := e.ObjectOld.(*trainjob.TrainJob)
	job, newOK := e.ObjectNew.(*trainjob.TrainJob)
	switch {
	case oldOK && newOK && lifecycle.OnlyToldChanged(old, job):
		return routeNone
	case startedUnderKueue(e, manageWithoutQueueName):
		return routeFirst
	}
	return routeDefault
}

// hasActivePods: the job's status counts active pods in one of its Jobs.
func hasActivePods(job *trainjob.TrainJob) bool {
	for _, s := range job.Status.JobsStatus {
		if ptr.Deref(s.Active, 0) > 0 {
			return true
		}
	}
	return false
}

// arrivedOrStartedFirst enqueues a TrainJob ahead of the others for its
// arrival (arrivalPriority: its first reconcile creates its Workload, the
// step every job waits on before it can queue) and for its own update once
// it runs (decisionPriority)
// (startedUnderKueue picks the updates it is given). In a burst of
// arrivals, the reconciles of jobs already queued (Kueue's status writes,
// Trainer's) would otherwise be served first, in order, and a new job
// would wait seconds for its Workload. The jobs of the informer's first
// list are no arrivals: a restart does not put every job ahead.
func arrivedOrStartedFirst() handler.EventHandler {
	inner := &handler.EnqueueRequestForObject{}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.IsInInitialList {
				return
			}
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				q = ahead{PriorityQueue: pq, at: arrivalPriority}
			}
			inner.Create(ctx, e, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				q = urgent(pq)
			}
			inner.Update(ctx, e, q)
		},
	}
}
