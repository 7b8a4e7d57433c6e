package integration

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// Stop suspends the job, waits for its child Jobs to drain and then removes
// exactly the override entries injected at admission. Waiting is not an
// error: the job's own status update (active reaching zero) requeues it, so
// there is neither an error log nor a hot retry meanwhile. A stopped job
// costs no request.
func (t *TrainJob) Stop(ctx context.Context, c client.Client, _ []podset.PodSetInfo, _ jobframework.StopReason, _ string) (bool, error) {
	stoppedNow := false
	if !t.IsSuspended() {
		if err := setSuspend(ctx, c, &t.TrainJob, true); err != nil {
			return false, err
		}
		stoppedNow = true
	}
	if t.IsActive() {
		return stoppedNow, nil
	}
	restored, err := patchGuarded(ctx, c, t.deps.apiReader, &t.TrainJob, t.deps.opts.Shape.Restore)
	if err != nil {
		return stoppedNow, err
	}
	if restored {
		t.deps.recorder.Eventf(&t.TrainJob, corev1.EventTypeNormal, ReasonRestored,
			"Removed the admission's entries from %s", t.deps.opts.Shape.Name())
	}
	return stoppedNow, nil
}

// RestorePodSetsInfo removes the injected entries in memory. The framework
// only calls it for jobs without a custom Stop; ours has one, but the
// interface asks for it.
func (t *TrainJob) RestorePodSetsInfo([]podset.PodSetInfo) bool {
	before := len(t.Spec.PodTemplateOverrides)
	kept := t.Spec.PodTemplateOverrides[:0:0]
	for _, o := range t.Spec.PodTemplateOverrides {
		if !shape.IsInjected(&o) {
			kept = append(kept, o)
		}
	}
	t.Spec.PodTemplateOverrides = kept
	return len(kept) != before
}
