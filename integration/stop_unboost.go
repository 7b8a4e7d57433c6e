package integration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// unboostEvicted zeroes our priority boost on the job's Workload once
// Kueue evicted it, before the job is stopped: the anti-cascade rule
// (preemptcost.Of: a job that does not run has no boost) made to hold by
// order, not by a race. An evicted Workload is requeued (its reservation
// released) only by the job framework, in the very reconcile that stops
// the job and only after Stop returns, so a boost still on it then would
// make the requeued job pending with a running job's priority: it would
// preempt a peer, which would preempt the next. The priority boost
// controller writes the same zero on its own; this write is the one that
// cannot come late, whether that controller is backlogged or the leader
// was down across the eviction (the eviction waits for us either way).
// A Workload that has none of our boost, or none to zero, costs no write.
func (t *TrainJob) unboostEvicted(ctx context.Context, c client.Client) error {
	wl := t.obs.workload
	if wl == nil || !preemptcost.Marked(wl) || preemptcost.BoostValue(wl) == 0 ||
		!apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
		return nil
	}
	patched := wl.DeepCopy()
	preemptcost.SetOn(patched, &preemptcost.Boost{})
	// Guarded by the resourceVersion read: the job framework reads the
	// Workload again on the conflict's retry.
	err := c.Patch(ctx, patched, client.MergeFromWithOptions(wl, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("zeroing the priority boost of evicted Workload %s/%s before its job stops (else it would be requeued with a running job's priority): %w", wl.Namespace, wl.Name, err)
	}
	t.obs.workload = patched
	return nil
}
