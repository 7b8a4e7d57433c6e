package integration

import (
	"context"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// decisionPriority is the work-queue priority of a job whose Workload Kueue
// just decided on (admitted: start it; evicted or deactivated: stop it), or
// whose Workload holds quota and changed. Everything else is queued at the
// default, 0.
const decisionPriority = 10

// decisionsFirst enqueues a Workload's TrainJob as inner does, but ahead of
// the others when Kueue just decided on the Workload. With thousands of jobs
// queued, each status change Kueue makes to a pending Workload (its
// requeue state, its position) enqueues that job's reconcile, and an
// admitted job waited behind all of them before its start (admitted →
// unsuspended was ~110 s at 10,000 queued, docs/scale.md): quota was
// booked and the pods not yet asked for.
//
// Any other change to a Workload that holds quota goes first too. The
// reconcile of an admission may not be the one that starts the job: in a
// burst, Kueue admits a Workload before the job framework wrote its
// PodsReady condition, that reconcile writes the condition and returns, and
// the start is the next reconcile, enqueued by that write. Queued behind
// the burst, that next reconcile was the tail of admitted → unsuspended
// (p99 10 s at 2,000 jobs, half in a burst). The same holds for the
// reconciles that finish a job and give its quota back. Workloads holding
// quota are few, bounded by the quota, so the thousands queued cannot crowd
// this lane.
func decisionsFirst(inner handler.EventHandler) handler.EventHandler {
	return handler.Funcs{
		CreateFunc:  inner.Create,
		DeleteFunc:  inner.Delete,
		GenericFunc: inner.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			old, oldOK := e.ObjectOld.(*kueue.Workload)
			wl, newOK := e.ObjectNew.(*kueue.Workload)
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok && oldOK && newOK && (decided(old, wl) || changedHoldingQuota(old, wl)) {
				q = urgent{pq}
			}
			inner.Update(ctx, e, q)
		},
	}
}

// decided: Kueue reserved quota for wl, admitted it, evicted it, or it was
// deactivated, since old.
func decided(old, wl *kueue.Workload) bool {
	for _, c := range []string{kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted, kueue.WorkloadEvicted} {
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, c) && !apimeta.IsStatusConditionTrue(old.Status.Conditions, c) {
			return true
		}
	}
	return ptr.Deref(old.Spec.Active, true) && !ptr.Deref(wl.Spec.Active, true)
}

// changedHoldingQuota: wl holds a quota reservation, is not finished, and
// changed since old (not a resync).
func changedHoldingQuota(old, wl *kueue.Workload) bool {
	return old.ResourceVersion != wl.ResourceVersion &&
		apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) &&
		!apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

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
	if !manageWithoutQueueName && job.Labels[queueLabel] == "" {
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
