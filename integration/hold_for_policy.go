package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Backoff of a job held for an admission policy: the first retry after
// policyRetryFirst, each further one twice as late, up to policyRetryMax.
const (
	policyRetryFirst = time.Minute
	policyRetryMax   = 15 * time.Minute
)

// due is when a job held so is queued again, first the first wait.
func due(h names.PolicyHold, first time.Duration) time.Time {
	if first <= 0 {
		first = policyRetryFirst
	}
	wait := first
	for i := 1; i < h.Attempt && wait < policyRetryMax; i++ {
		wait *= 2
	}
	return h.Since.Add(min(wait, max(policyRetryMax, first)))
}

// holdForPolicy gives back the quota of a job whose start an admission
// policy refused, and queues it again after a backoff: a policy is an
// admin's object outside the job, being rolled out or mended, and finishing
// the Workload would lose the job for it. Each refusal is a hold; each
// retry after the last hold's backoff is one admission and one start, so a
// policy that keeps refusing costs a few requests per backoff, never a
// loop. It returns when the reconcile has to come back. Each write is
// guarded by the Workload's resourceVersion.
func (t *TrainJob) holdForPolicy(ctx context.Context, now time.Time) (time.Duration, error) {
	if t.obs == nil || t.obs.workload == nil || workloadFinished(t.obs.workload) || t.obs.runner != trainjob.RunLocally {
		return 0, nil
	}
	wl := t.obs.workload
	prev, held := names.PolicyHoldOf(wl.Annotations)
	switch {
	case t.heldByPolicy != "" && workload.IsActive(wl) && t.IsSuspended():
		next := names.PolicyHold{Policy: t.heldByPolicy, Since: now.UTC().Truncate(time.Second), Attempt: prev.Attempt + 1}
		if err := setPolicyHold(ctx, t, wl, &next, false); err != nil {
			return 0, err
		}
		return due(next, t.deps.opts.PolicyRetry).Sub(now), nil
	case held && !workload.IsActive(wl):
		if wait := due(prev, t.deps.opts.PolicyRetry).Sub(now); wait > 0 {
			return wait, nil
		}
		if err := setPolicyHold(ctx, t, wl, &prev, true); err != nil {
			return 0, err
		}
		t.deps.speak(&t.TrainJob, normal(ReasonPolicyRetry, actionQueue, fmt.Sprintf(
			"Workload %s is queued again to try the start ValidatingAdmissionPolicy %s refused (attempt %d)", wl.Name, prev.Policy, prev.Attempt+1)))
	case held && !t.IsSuspended():
		// Started: the policy let it through; the count starts afresh.
		return 0, setPolicyHold(ctx, t, wl, nil, true)
	}
	return 0, nil
}

// setPolicyHold writes mark h (nil: none) and spec.active in one merge
// patch guarded by the resourceVersion read.
func setPolicyHold(ctx context.Context, t *TrainJob, wl *kueue.Workload, h *names.PolicyHold, active bool) error {
	var mark any
	if h != nil {
		v, err := json.Marshal(h)
		if err != nil {
			return err
		}
		mark = string(v)
	}
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": wl.ResourceVersion, "annotations": map[string]any{names.HeldByPolicyAnnotation: mark}},
		"spec":     map[string]any{"active": active},
	})
	if err != nil {
		return err
	}
	if err := t.deps.client.Patch(ctx, wl.DeepCopy(), client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("holding Workload %s/%s for an admission policy's refusal: %w", wl.Namespace, wl.Name, err)
	}
	return nil
}
