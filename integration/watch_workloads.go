package integration

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// notOnlyReworded passes every Workload event but the updates onlyReworded
// recognises.
func notOnlyReworded() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(*kueue.Workload)
		wl, newOK := e.ObjectNew.(*kueue.Workload)
		return !oldOK || !newOK || !onlyReworded(old, wl)
	}}
}

// onlyReworded: the update of a Workload that holds no quota changed nothing
// but the wording of its QuotaReserved condition. Kueue rewrites a pending
// Workload's message whenever it tries it again and the shortfall differs
// ("… 8 more needed"): a quarter of all Workload updates with hundreds of
// jobs queued (`make bench`, N = 500), each a reconcile that can only
// conclude the job stays queued. Neither the job framework nor this
// integration acts on that message (explain reads it from the API server).
// A resync (the same resourceVersion) is not an update and passes, and so
// does any change of the spec, the metadata or the rest of the status.
func onlyReworded(old, wl *kueue.Workload) bool {
	if old.ResourceVersion == wl.ResourceVersion || old.Generation != wl.Generation {
		return false
	}
	if workload.HasQuotaReservation(old) || workload.HasQuotaReservation(wl) {
		return false
	}
	oldMeta, meta := old.ObjectMeta, wl.ObjectMeta
	oldMeta.ResourceVersion, meta.ResourceVersion = "", ""
	oldMeta.ManagedFields, meta.ManagedFields = nil, nil
	if !equality.Semantic.DeepEqual(oldMeta, meta) {
		return false
	}
	oldStatus, status := old.Status, wl.Status
	oldStatus.Conditions, status.Conditions = unworded(old.Status.Conditions), unworded(wl.Status.Conditions)
	return equality.Semantic.DeepEqual(oldStatus, status)
}

// unworded is conds with the QuotaReserved condition's message and time
// left out; the others stay whole.
func unworded(conds []metav1.Condition) []metav1.Condition {
	i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == kueue.WorkloadQuotaReserved })
	if i < 0 {
		return conds
	}
	out := slices.Clone(conds)
	out[i].Message, out[i].LastTransitionTime = "", metav1.Time{}
	return out
}

// decisionsFirst enqueues a Workload's TrainJob as inner does, but ahead of
// the others when Kueue just decided on the Workload. With thousands of jobs
// queued, each status change Kueue makes to a pending Workload (its
// requeue state, its position) enqueues that job's reconcile, and an
// admitted job waited behind all of them before its start (admitted →
// unsuspended was ~110 s at 10,000 queued, docs/scale.md): quota was
// booked and the pods not yet asked for.
//
// Any other change to an admitted Workload goes first too. The reconcile
// of an admission may not be the one that starts the job (a start refused
// and retried, a PodsReady write on a cache that lagged the admission);
// queued behind a burst, the next one was the tail of admitted →
// unsuspended (p99 10 s at 2,000 jobs, half in a burst). The same holds for
// the reconciles that finish a job and give its quota back. Admitted
// Workloads are few, bounded by the quota their running pods use, so the
// thousands queued cannot crowd this lane. A Workload that holds quota but
// waits on its admission checks (a ProvisioningRequest, or the check of
// Kueue's harness scale that never turns Ready) is not admitted: nothing
// of ours changes until it is, and thousands may wait so. Counting those
// in (it was "holds quota"), their check updates took this lane from the
// arrivals: at 15,000 held jobs, created → Workload p50 21.5 s
// (docs/scale.md).
func decisionsFirst(inner handler.EventHandler) handler.EventHandler {
	return handler.Funcs{
		CreateFunc:  inner.Create,
		DeleteFunc:  inner.Delete,
		GenericFunc: inner.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			old, oldOK := e.ObjectOld.(*kueue.Workload)
			wl, newOK := e.ObjectNew.(*kueue.Workload)
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok && oldOK && newOK && (decided(old, wl) || changedAdmitted(old, wl)) {
				q = urgent(pq)
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

// changedAdmitted: wl is admitted (quota reserved and every admission
// check Ready), not finished, and changed since old (not a resync).
func changedAdmitted(old, wl *kueue.Workload) bool {
	return old.ResourceVersion != wl.ResourceVersion &&
		apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) &&
		!apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}
