package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
)

// PodSets are the job's roles as Trainer runs them. A job that holds a quota
// reservation keeps reporting the PodSets it was admitted with while it asks
// for the same pods: a running job can't change shape (its JobSet is
// immutable), so an edited runtime must not stop it, and a Workload written
// by another integration stays matched when only non-scheduling details of
// its templates differ from ours.
func (t *TrainJob) PodSets(context.Context, client.Client) ([]kueue.PodSet, error) {
	ps, err := t.currentPodSets()
	if rtErr := t.obs.runtimeErr; rtErr != nil && !(t.obs.reserved() != nil && !t.IsSuspended()) {
		// Said while the job waits, reserved or not: a running job does
		// not need its runtime any more.
		t.deps.metrics.PodSetError(rtErr.Reason)
		t.say(warning(rtErr.Reason, actionComputePodSets, rtErr.Message))
	}
	if gone := t.obs.runtimeGone; gone != nil {
		t.say(warning(gone.Reason, actionQueue, gone.Message))
	}
	t.sayAdoptedWorkloadDiffers()
	if err != nil && errors.As(err, new(*runtimesource.Error)) {
		// The runtime watch requeues the job when the runtime changes:
		// retrying before that would only spin.
		return nil, jobframework.UnretryableError(err.Error())
	}
	return ps, err
}

// sayAdoptedWorkloadDiffers: a running job Kueue's built-in integration
// started (its entries are on the job) keeps the Workload that integration
// wrote, as every running job keeps its reservation; where that Workload
// books other pods than Trainer runs, its owner hears it once. Its next
// stop or requeue reports the computed PodSets, and the job framework
// corrects the Workload then: never by stopping a running job.
func (t *TrainJob) sayAdoptedWorkloadDiffers() {
	reserved := t.obs.reserved()
	if reserved == nil || t.IsSuspended() || t.obs.runtimeErr != nil || len(t.deps.opts.Shape.InTreeMarked(&t.TrainJob)) == 0 {
		return
	}
	admitted := apimeta.IsStatusConditionTrue(reserved.Status.Conditions, kueue.WorkloadAdmitted)
	if diff := quota.Difference(reserved.Spec.PodSets, t.obs.PodSets, admitted); diff != "" {
		t.say(warning(ReasonAdoptedWorkloadDiffers, actionComputePodSets, fmt.Sprintf(
			"this TrainJob runs on the Workload %s that Kueue's built-in TrainJob integration wrote, which books other pods than Trainer runs: %s. It keeps running on it; the Workload is corrected at the job's next stop or requeue", reserved.Name, diff)))
	}
}

// currentPodSets: what PodSets reports, the error being the runtime's.
func (t *TrainJob) currentPodSets() ([]kueue.PodSet, error) {
	reserved := t.obs.reserved()
	if reserved != nil && !t.IsSuspended() {
		// quota.KeepsReservation: a running job keeps its reservation.
		return reserved.Spec.DeepCopy().PodSets, nil
	}
	if t.obs.runtimeErr != nil {
		if reserved != nil {
			// The reservation stands on what was computed before: report
			// it, so the job framework goes on to the start, which gives
			// the quota back (startPlan), or to the eviction of a Workload
			// held for its missing runtime (holdForRuntime). Failing here
			// instead would stop the job framework before it could evict or
			// release anything.
			return reserved.Spec.DeepCopy().PodSets, nil
		}
		return nil, t.obs.runtimeErr
	}
	computed := t.obs.PodSets
	if reserved != nil && quota.KeepsReservation(reserved.Spec.PodSets, computed, false) {
		return reserved.Spec.DeepCopy().PodSets, nil
	}
	out := make([]kueue.PodSet, len(computed))
	for i := range computed {
		computed[i].DeepCopyInto(&out[i])
	}
	return out, nil
}

// PodsReady: every role due to run now is running or done. A job starts in
// waves (initializers, then trainer nodes), so this is the wave that runs,
// read from jobsStatus against the roles it runs with.
func (t *TrainJob) PodsReady(context.Context, client.Client) bool {
	roles, ok := t.runningRoles()
	if !ok {
		// The runtime can't be read any more: what was judged last stands,
		// rather than a running job evicted for our blindness.
		wl := t.obs.reserved()
		return wl != nil && apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady)
	}
	return quota.Due(roles, progressOf(t.obs))
}

// runningRoles are the job's roles as they run: while it holds a
// reservation, fitted to the PodSets it was admitted with, since its JobSet
// can't follow a runtime edited since. ok is false when they can't be
// computed.
func (t *TrainJob) runningRoles() ([]podsets.Role, bool) {
	if t.obs.runtimeErr != nil {
		return nil, false
	}
	if wl := t.obs.reserved(); wl != nil {
		return podsets.Admitted(t.obs.Roles, wl.Spec.PodSets), true
	}
	return t.obs.Roles, true
}

// progressOf is how far each role got, by name.
func progressOf(o *observed) map[string]quota.Progress {
	out := make(map[string]quota.Progress, len(o.jobs))
	for i := range o.jobs {
		out[o.jobs[i].Name] = quota.Progress{Ready: ptr.Deref(o.jobs[i].Ready, 0), Succeeded: ptr.Deref(o.jobs[i].Succeeded, 0)}
	}
	return out
}

// ReclaimablePods reports the pods of roles whose Jobs already succeeded,
// typically the initializers once the trainer nodes started: their quota can
// go to waiting jobs. Roles are reported in runtime order.
func (t *TrainJob) ReclaimablePods(ctx context.Context, _ client.Client) ([]kueue.ReclaimablePod, error) {
	jobs := t.obs.jobs
	if len(jobs) == 0 {
		return nil, nil
	}
	roles, ok := t.runningRoles()
	if !ok {
		// As reported last: Kueue refuses lowered counts, and without the
		// runtime no higher one can be told.
		if wl := t.obs.reserved(); wl != nil {
			return slices.Clone(wl.Status.ReclaimablePods), nil
		}
		return nil, nil
	}
	succeeded := make(map[string]int32, len(jobs))
	for i := range jobs {
		succeeded[jobs[i].Name] = ptr.Deref(jobs[i].Succeeded, 0)
	}
	var out []kueue.ReclaimablePod
	for i := range roles {
		r := &roles[i]
		done := succeeded[r.Name]
		if done <= 0 || done > r.Replicas {
			continue
		}
		out = append(out, kueue.ReclaimablePod{Name: kueue.NewPodSetReference(r.Name), Count: done * r.PodsPerReplica})
	}
	if w := waveEndOf(ctx); w != nil {
		// Should the framework write these, PodsReady goes with them.
		w.podsReady = podsReadyAtWaveEnd(t.obs.workload, t.PodsReady(ctx, nil), time.Now())
	}
	return out, nil
}
