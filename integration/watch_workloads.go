package integration

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
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
