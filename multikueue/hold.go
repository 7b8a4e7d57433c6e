package multikueue

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A Workload MultiKueue dispatched to a worker for a TrainJob that cannot
// run there is held on that worker:
//
//   - its quota reservation goes back: Admitted false, no admission, and
//     QuotaReserved false with Kueue's own reason OnHold
//     (kueue.WorkloadOnHold). Kueue (v0.19) does not queue a Workload on
//     hold (workload.IsAdmissible), and its Workload controller leaves
//     one alone where it would otherwise clear foreign conditions and
//     requeue it: a Workload that needs DRA reconciling
//     (dra.NeedsDRAReconcile). A reason of ours there was cleared, and a
//     blocked DRA job looped between admitted and held;
//   - its Requeued condition is false with one of our reasons (which the
//     hold is known by), so a Kueue that does not know OnHold does not
//     admit it again either (a Workload with Requeued false waits, as
//     after Kueue's own backoffs).
//
// Why this is safe with Kueue 0.19's MultiKueue: the manager reads the
// worker's copy as neither admitted nor evicted nor finished, so it
// neither stops the job elsewhere nor finishes it; its spec is untouched,
// so MultiKueue does not delete and re-create it (it would be admitted
// again at once); and with no admitted copy, MultiKueue dispatches to the
// other workers and converges on the one that admits, deleting this copy
// (never a TrainJob it did not create). Deactivating the copy instead
// would change its spec; evicting it would read, on the manager, as the
// eviction of a job that already runs elsewhere.

// held is the hold on wl, nil when it is not held by us.
func held(wl *kueue.Workload) *metav1.Condition {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued)
	if c == nil || c.Status != metav1.ConditionFalse || (c.Reason != ReasonNameTakenOnWorker && c.Reason != ReasonCopyRefusedOnWorker) {
		return nil
	}
	return c
}

// hold holds wl (see above), saying msg in its conditions; one status
// patch guarded by the resourceVersion read.
func hold(ctx context.Context, c client.Client, wl *kueue.Workload, reason, msg string, now time.Time) error {
	out := wl.DeepCopy()
	workload.UnsetQuotaReservationWithCondition(out, kueue.WorkloadOnHold, msg, now)
	setRequeued(out, reason, msg, false, now)
	if err := c.Status().Patch(ctx, out, client.MergeFromWithOptions(wl, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("holding dispatched Workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	return nil
}

// release lets the worker's Kueue queue wl again: off hold (QuotaReserved
// false as for any pending Workload) and requeued.
func release(ctx context.Context, c client.Client, wl *kueue.Workload, msg string, now time.Time) error {
	released := wl.DeepCopy()
	if workload.IsOnHold(released) {
		apimeta.SetStatusCondition(&released.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse,
			Reason: kueue.WorkloadPending, Message: msg, ObservedGeneration: wl.Generation, LastTransitionTime: metav1.NewTime(now)})
	}
	setRequeued(released, ReasonHoldReleased, msg, true, now)
	if err := c.Status().Patch(ctx, released, client.MergeFromWithOptions(wl, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("releasing dispatched Workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	return nil
}

func setRequeued(wl *kueue.Workload, reason, msg string, status bool, now time.Time) {
	c := metav1.Condition{Type: kueue.WorkloadRequeued, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
		ObservedGeneration: wl.Generation, LastTransitionTime: metav1.NewTime(now)}
	if status {
		c.Status = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&wl.Status.Conditions, c)
}

// nameTaken says why job, the TrainJob of the dispatched Workload wl's
// name on this worker, is not the copy MultiKueue makes for wl; "" when it
// is, or when there is none (yet). A job on its way out is not in the
// way: MultiKueue's copy follows it.
func nameTaken(wl *kueue.Workload, job *trainjob.TrainJob) string {
	if job == nil || job.DeletionTimestamp != nil {
		return ""
	}
	runs := jobframework.PrebuiltWorkloadNameFor(job)
	if runs == wl.Name {
		return ""
	}
	why := "MultiKueue did not create it"
	if runs != "" {
		why = fmt.Sprintf("it was made for Workload %s", runs)
	}
	return fmt.Sprintf("TrainJob %s/%s already exists on this cluster and %s: MultiKueue cannot create the job it dispatched here for Workload %s, "+
		"which gives back its quota and waits until that TrainJob is gone (the job is dispatched to another worker meanwhile). "+
		"Rename or delete one of the two jobs", job.Namespace, job.Name, why, wl.Name)
}
