package integration

import (
	"context"
	"fmt"
	"strings"
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
// run there is held on that worker: its quota reservation goes back
// (QuotaReserved and Admitted false, no admission, as Kueue's own
// UnsetQuotaReservationWithCondition leaves it) and its Requeued condition
// is false with one of these reasons, so the worker's Kueue does not
// admit it again (a Workload with Requeued false waits, as after Kueue's
// own backoffs) until the hold is released.
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
const (
	// ReasonNameTakenOnWorker: a TrainJob of the dispatched job's name
	// already exists on the worker and was not made for this Workload;
	// MultiKueue cannot create its copy there.
	ReasonNameTakenOnWorker = "TrainJobNameTakenOnWorker"
	// ReasonCopyRefusedOnWorker: the worker's API server refuses the copy
	// MultiKueue would create (its runtime missing there, a webhook or
	// policy of the worker).
	ReasonCopyRefusedOnWorker = "TrainJobCopyRefusedOnWorker"
	// ReasonHoldReleased: what held the Workload on the worker is gone;
	// it is queued there again.
	ReasonHoldReleased = "DispatchHoldReleased"
)

// heldDispatched is the hold on wl, nil when it is not held by us.
func heldDispatched(wl *kueue.Workload) *metav1.Condition {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued)
	if c == nil || c.Status != metav1.ConditionFalse || (c.Reason != ReasonNameTakenOnWorker && c.Reason != ReasonCopyRefusedOnWorker) {
		return nil
	}
	return c
}

// holdDispatched holds wl (see above), saying msg in its conditions; one
// status patch guarded by the resourceVersion read.
func holdDispatched(ctx context.Context, c client.Client, wl *kueue.Workload, reason, msg string, now time.Time) error {
	held := wl.DeepCopy()
	workload.UnsetQuotaReservationWithCondition(held, reason, msg, now)
	setRequeued(held, reason, msg, false, now)
	if err := c.Status().Patch(ctx, held, client.MergeFromWithOptions(wl, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("holding dispatched Workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	return nil
}

// releaseDispatched lets the worker's Kueue queue wl again.
func releaseDispatched(ctx context.Context, c client.Client, wl *kueue.Workload, msg string, now time.Time) error {
	released := wl.DeepCopy()
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

// dispatchedJobName is the name of the TrainJob a Workload MultiKueue
// created on this worker was made for: the job framework names a job's
// Workload "trainjob-<name>-<hash>" on the manager, and MultiKueue gives
// the worker's copy the same name. ok is false for a Workload MultiKueue
// did not create, or one of another kind.
func dispatchedJobName(wl *kueue.Workload) (string, bool) {
	if _, dispatched := wl.Labels[kueue.MultiKueueOriginLabel]; !dispatched {
		return "", false
	}
	prefix := strings.ToLower(trainjob.GVK.Kind) + "-"
	dash := strings.LastIndex(wl.Name, "-")
	if !strings.HasPrefix(wl.Name, prefix) || dash <= len(prefix) {
		return "", false
	}
	return wl.Name[len(prefix):dash], true
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
