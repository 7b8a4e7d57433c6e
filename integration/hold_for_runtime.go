package integration

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// holdForRuntime gives back the quota a job reserved while it can't start
// for want of its runtime: the runtime does not exist, or (before Trainer
// v2.3) it was edited since Trainer built the job's JobSet, which refuses
// the change (JobSetOutOfDate). Its Workload is deactivated, and marked so
// (Kueue evicts an inactive Workload, the job framework clears the
// reservation, and Kueue does not admit it again meanwhile); once the job
// can start again the mark goes and the Workload is queued again. A
// Workload that never reserved quota is left pending: Kueue keeps a
// deactivated one evicted until its next admission, so the job framework
// would no longer follow the job's edits (its queue name among them). A
// running job is left alone (its JobSet no longer needs the runtime), and
// so are a Workload someone else deactivated and a job MultiKueue
// dispatches (the worker's runtime is what counts). Each write is guarded
// by the Workload's resourceVersion.
func (t *TrainJob) holdForRuntime(ctx context.Context) error {
	if t.obs == nil || t.obs.workload == nil || workloadFinished(t.obs.workload) || t.obs.runner != trainjob.RunLocally {
		return nil
	}
	wl := t.obs.workload
	_, held := wl.Annotations[names.HeldForRuntimeAnnotation]
	why := t.obs.outgrown
	for _, e := range []*runtimesource.Error{t.obs.runtimeErr, t.obs.runtimeGone, t.heldFor} {
		if e != nil && e.Reason == ReasonRuntimeNotFound {
			why = e
		}
	}
	switch {
	case why != nil && !held && workload.IsActive(wl) && t.IsSuspended() && t.obs.reserved() != nil:
		ref, err := runtimesource.RefOf(&t.TrainJob)
		if err != nil {
			return nil
		}
		if err := setHeld(ctx, t.deps.client, wl, ref.String()); err != nil {
			return err
		}
		if why.Reason == ReasonJobSetOutOfDate {
			t.deps.speak(&t.TrainJob, warning(ReasonJobSetOutOfDate, actionQueue, why.Message))
			return nil
		}
		t.deps.speak(&t.TrainJob, normal(ReasonHeldForRuntime, actionQueue, fmt.Sprintf(
			"%s does not exist: Workload %s is deactivated so it neither holds nor gets quota, and is queued again once the runtime exists", ref, wl.Name)))
	case why == nil && held && !workload.IsActive(wl):
		if err := setHeld(ctx, t.deps.client, wl, ""); err != nil {
			return err
		}
		t.deps.speak(&t.TrainJob, normal(ReasonRuntimeBack, actionQueue, fmt.Sprintf(
			"the job can start from %s again: Workload %s is queued again", wl.Annotations[names.HeldForRuntimeAnnotation], wl.Name)))
	}
	return nil
}

// setHeld deactivates wl with the mark naming runtime, or, for an empty
// runtime, removes the mark and reactivates it: one merge patch of the two
// fields and the resourceVersion read, so a Workload changed since is not
// written (the change's own reconcile decides again).
func setHeld(ctx context.Context, c client.Client, wl *kueue.Workload, runtime string) error {
	var mark any
	if runtime != "" {
		mark = runtime
	}
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": wl.ResourceVersion, "annotations": map[string]any{names.HeldForRuntimeAnnotation: mark}},
		"spec":     map[string]any{"active": runtime == ""},
	})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, wl.DeepCopy(), client.RawPatch(types.MergePatchType, data)); err != nil {
		verb := "deactivating"
		if runtime == "" {
			verb = "reactivating"
		}
		return fmt.Errorf("%s Workload %s/%s for its runtime: %w", verb, wl.Namespace, wl.Name, err)
	}
	return nil
}
