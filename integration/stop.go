package integration

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/trainjob-kueue/trainjob-kueue/jobpatch"
	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Stop mirrors the start: it suspends the job, waits for its child Jobs to
// drain and then removes exactly the entries the start injected, each a
// write of its own (Trainer takes override changes only on a suspended job
// with no active Job). Waiting is not an error: the job's own status update
// (active reaching zero) requeues it, so there is neither an error log nor
// a hot retry meanwhile. A stopped job costs no request. A job MultiKueue
// dispatched was never started here: its worker copy is MultiKueue's to
// remove, and there is nothing to undo.
func (t *TrainJob) Stop(ctx context.Context, c client.Client, _ []podset.PodSetInfo, reason jobframework.StopReason, _ string) (bool, error) {
	if err := t.unboostEvicted(ctx, c); err != nil {
		return false, err
	}
	if t.obs.runner == trainjob.RunRemotely {
		return false, nil
	}
	if reason == jobframework.StopReasonWorkloadEvicted {
		wait, err := t.noticeWait(ctx, time.Now())
		if err != nil || wait > 0 {
			// In its preemption notice (stop_notice.go): running on, its
			// quota kept, woken at the notice's end.
			t.noticeLeft = wait
			return false, err
		}
	}
	stoppedNow := false
	if !t.IsSuspended() {
		if err := setSuspend(ctx, c, &t.TrainJob, true); err != nil {
			t.stopRefused(err)
			return false, err
		}
		stoppedNow = true
	}
	if t.IsActive() {
		return stoppedNow, nil
	}
	restored, err := jobpatch.Guarded(ctx, c, t.deps.apiReader, &t.TrainJob, restoreSuspended(t.deps.opts.Shape.Restore))
	if err != nil {
		t.deps.metrics.Restored(metrics.ReasonAPIError)
		t.stopRefused(err)
		return stoppedNow, err
	}
	if !t.IsSuspended() {
		// Our cache was a write behind: the server has the job started (by
		// our own start, a moment ago). Stop it from the top; its entries
		// go once it drains, on the reconcile its status update brings.
		if err := setSuspend(ctx, c, &t.TrainJob, true); err != nil {
			t.stopRefused(err)
			return false, err
		}
		return true, nil
	}
	if restored {
		t.deps.metrics.Restored("")
		t.deps.speak(&t.TrainJob, normal(ReasonRestored, actionStop, "Removed the admission's entries from "+t.deps.caps.Field))
	}
	return stoppedNow, nil
}

// stopRefused says so when the API server refuses our stop for what it
// contains: unlike a race, it will not pass by itself, and until someone
// acts the job keeps its pods (or its entries). The reconciler retries
// with its backoff.
func (t *TrainJob) stopRefused(err error) {
	if !jobpatch.Refused(err) {
		return
	}
	t.deps.speak(&t.TrainJob, warning(ReasonStopRefused, actionStop, fmt.Sprintf(
		"the API server refused to stop this TrainJob: %v; retrying with backoff. An admission webhook or policy that refuses spec.suspend or changes to %s keeps the job from being preempted", err, t.deps.caps.Field)).once(t.UID))
}

// RestorePodSetsInfo restores nothing in memory: the job framework calls it
// only for jobs without a custom Stop, and ours (JobWithCustomStop) removes
// the injected entries itself, with a guarded patch of the job as the
// server has it.
func (t *TrainJob) RestorePodSetsInfo(context.Context, []podset.PodSetInfo) bool {
	return false
}

// restoreSuspended renders the restore only on a suspended job: the guarded
// patch renders again from the server's copy after a stale write, and
// Trainer refuses override changes on a running job.
func restoreSuspended(restore func(*trainjob.TrainJob) []shape.Op) func(*trainjob.TrainJob) []shape.Op {
	return func(j *trainjob.TrainJob) []shape.Op {
		if !j.Suspended() {
			return nil
		}
		return restore(j)
	}
}

// setSuspend sets spec.suspend alone. A merge patch is safe here: it names
// one scalar and cannot clobber anything else.
func setSuspend(ctx context.Context, c client.Client, job *trainjob.TrainJob, suspend bool) error {
	data := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend)
	if err := c.Patch(ctx, job, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("setting spec.suspend=%t on TrainJob %s/%s: %w", suspend, job.Namespace, job.Name, err)
	}
	return nil
}
