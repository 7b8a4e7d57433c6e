package integration

import (
	"context"

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

// hasActivePods: the job's status counts active pods in one of its Jobs.
func hasActivePods(job *trainjob.TrainJob) bool {
	for _, s := range job.Status.JobsStatus {
		if ptr.Deref(s.Active, 0) > 0 {
			return true
		}
	}
	return false
}

// startedFirst enqueues a TrainJob for its own update, ahead of the others
// (startedUnderKueue picks the updates it is given).
func startedFirst() handler.EventHandler {
	inner := &handler.EnqueueRequestForObject{}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				q = urgent{pq}
			}
			inner.Update(ctx, e, q)
		},
	}
}
