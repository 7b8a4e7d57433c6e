package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/jobpatch"
	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// RunWithPodSetsInfo starts the job on its admission: it writes the
// admission's entries into the job's override field and spec.suspend=false
// itself, as guarded JSON Patches (Start), and leaves t as it was read.
// The override lists are atomic, so the merge patch the job framework
// would send from t could replace the user's entries with our typed copy
// of them; the framework's patch afterwards changes nothing and is not
// sent (frameworkClient). Stop mirrors it.
func (t *TrainJob) RunWithPodSetsInfo(ctx context.Context, _ client.Client, infos []podset.PodSetInfo) error {
	if t.obs.runner == trainjob.RunRemotely {
		return t.refuseLocalRun()
	}
	err := t.start(ctx, infos)
	var pgErr *podGroupError
	switch {
	case errors.As(err, &pgErr):
		// Ours to write, never the job's to be finished for: it waits.
		t.deps.speak(&t.TrainJob, warning(gang.ReasonPodGroupNotWritten, actionGang, pgErr.Error()).once(workloadUID(t.obs.reserved())))
	case err != nil && jobpatch.Refused(err):
		err = t.startRefused(ctx, err)
	}
	var re *reasonError
	switch {
	case err == nil:
		t.deps.metrics.Injected("")
		t.deps.metrics.Started(t.obs.admittedAt().Time)
	case errors.As(err, &pgErr):
		t.deps.metrics.Injected(gang.ReasonPodGroupNotWritten)
	case errors.As(err, &re):
		t.deps.metrics.Injected(re.reason)
	default:
		t.deps.metrics.Injected(metrics.ReasonAPIError)
	}
	return err
}

// start renders the admission for the job as observed and writes it.
func (t *TrainJob) start(ctx context.Context, infos []podset.PodSetInfo) error {
	want, plans, err := t.startPlan(ctx, infos)
	if err != nil {
		return err
	}
	if err := t.applyPodGroups(ctx, plans); err != nil {
		return err
	}
	if msg := t.gangTimeoutConflict(plans); msg != "" {
		t.deps.speak(&t.TrainJob, warning(gang.ReasonGangTimeoutConflict, actionGang, msg))
	}
	note := gang.Note(plans)
	if t.deps.caps.Start != shape.OneRequestUnlessRefused || t.deps.twoRequestStart.Load() {
		return t.startInTwo(ctx, want, note)
	}
	_, _, err = t.write(ctx, &t.TrainJob, t.Generation, want, note, oneRequestStep)
	if !jobpatch.Refused(err) {
		return err
	}
	// Trainer v2.2.0 refuses runtime patches on a job the same request
	// unsuspends; v2.2.1 takes them, and its CRD is v2.2.0's. So the first
	// refusal is answered by asking again in two requests: if that start
	// goes through, the installed Trainer is one that needs two, whatever
	// its refusal said. A start refused for what it contains is refused
	// again, and nothing is learned from it.
	if err := t.startInTwo(ctx, want, note); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("The installed Trainer refused a start in one request and took it in two (Trainer v2.2.0 does): starting jobs in two requests from now on", "refusal", err)
	t.deps.twoRequestStart.Store(true)
	return nil
}

// startInTwo: for a Trainer that takes override changes only on a
// suspended job, the entries first, then the unsuspend of the job as the
// first write left it, each guarded.
func (t *TrainJob) startInTwo(ctx context.Context, want []shape.Injection, note string) error {
	injected, gen, err := t.write(ctx, &t.TrainJob, t.Generation, want, note, injectStep)
	if err != nil {
		return err
	}
	_, _, err = t.write(ctx, injected, gen, want, note, unsuspendStep)
	if err != nil && jobpatch.Refused(err) {
		// The unsuspend would be refused again: the job is not started, so
		// it keeps only what its owner wrote, as a stop would leave it.
		if _, rerr := jobpatch.Guarded(ctx, t.deps.client, t.deps.apiReader, injected, t.deps.opts.Shape.Restore); rerr != nil {
			return errors.Join(err, fmt.Errorf("taking the admission's entries back: %w", rerr))
		}
	}
	return err
}

// startPlan is what the start writes: each admitted role's injection, and
// the PodGroups of the job's gang. An error is the reason it must not
// start, said to the job's owner.
func (t *TrainJob) startPlan(ctx context.Context, infos []podset.PodSetInfo) ([]shape.Injection, []gang.Plan, error) {
	templates, err := t.currentPodSets()
	if err != nil {
		return nil, nil, err
	}
	if len(infos) != len(templates) {
		return nil, nil, podset.BadPodSetsInfoLenError(len(templates), len(infos))
	}
	if !t.deps.caps.PodMetadata {
		if err := t.refuse(metadataUnsupported(t.deps.caps, infos, admissionChecksOf(t.obs.reserved()))); err != nil {
			return nil, nil, err
		}
	}
	want := make([]shape.Injection, 0, len(infos))
	for i := range infos {
		info := &infos[i]
		idx := slices.IndexFunc(templates, func(ps kueue.PodSet) bool { return ps.Name == info.Name })
		if idx < 0 {
			return nil, nil, podset.BadPodSetsUpdateError("name", fmt.Errorf("admitted PodSet %q is not a replicatedJob of the runtime", info.Name))
		}
		inj, conflict := injection(&templates[idx].Template, info, t.obs.flavorsOf)
		if err := t.refuse(conflict); err != nil {
			return nil, nil, err
		}
		want = append(want, inj)
	}
	if t.deps.caps.SharedEntries {
		if err := t.refuse(t.sharedEntryConflict(want)); err != nil {
			return nil, nil, err
		}
	}
	if gone := t.obs.runtimeGone; gone != nil {
		// Trainer v2.3 would run the job from its snapshot, but its webhook
		// refuses every update of a job whose runtime does not exist, the
		// start's too: held like a job whose runtime is missing below,
		// without a write that is refused.
		return nil, nil, gone
	}
	if rtErr := t.obs.runtimeErr; rtErr != nil {
		if rtErr.Reason == ReasonRuntimeNotFound {
			// Admitted while its runtime is gone (a forced delete, a
			// runtime being recreated): not started, and not finished
			// either. Its Workload is deactivated until the runtime is back
			// (holdForRuntime), so Kueue evicts it and the reservation goes
			// back; a retry meanwhile finds the same.
			return nil, nil, rtErr
		}
		// Admitted, but the pods can no longer be computed (the runtime
		// was made unusable, or Trainer's snapshot of it is): Trainer
		// could not run them either. A permanent error: the job
		// framework finishes the Workload and the quota goes back, instead
		// of a reservation held by a job that can't start.
		return nil, nil, permanentRefusal(rtErr.Reason,
			fmt.Sprintf("%s; the job is not started and its quota reservation is released: recreate the TrainJob once its runtime is usable", rtErr.Message))
	}
	if o := t.obs.outgrown; o != nil {
		// Admitted, but Trainer can't apply the job to the JobSet it built
		// (JobSet refuses changes to its pods): unsuspending it would hold
		// the quota and start nothing. Held like a missing runtime's
		// (holdForRuntime), so the reservation goes back.
		return nil, nil, o
	}
	if err := t.sayGraceShort(ctx, want, templates); err != nil {
		return nil, nil, err
	}
	plans, err := t.gangPlans(ctx)
	if err != nil {
		return nil, nil, err
	}
	gang.WithPodGroupLabels(want, plans)
	return want, plans, nil
}

// refusal is why a job must not start: its event's reason, the field at
// fault and the message for its owner. The zero refusal refuses nothing.
type refusal struct {
	reason, field, msg string
}

// refuse says r to the job's owner and makes it the start's permanent
// error: the job framework finishes the Workload and releases its quota.
func (t *TrainJob) refuse(r refusal) error {
	if r.msg == "" {
		return nil
	}
	t.deps.speak(&t.TrainJob, warning(r.reason, actionStart, r.msg).once(workloadUID(t.obs.reserved())))
	return permanentRefusal(r.reason, r.msg)
}

// sharedEntryConflict: on Trainer v2.0 a user entry targeting roles
// admitted to different placements can place them one way only.
func (t *TrainJob) sharedEntryConflict(want []shape.Injection) refusal {
	path, roles := shape.SharedEntryConflict(&t.TrainJob, want)
	if path == "" {
		return refusal{}
	}
	return refusal{ReasonSharedOverrideConflict, "podSpecOverrides", fmt.Sprintf("%s targets roles %s, which were admitted to different placements (%s); one entry can place its roles in one way only, so the job is not started and its quota is released. Give each of those replicatedJobs an entry of its own, or queue the job where its roles share a flavor",
		path, strings.Join(roles, ", "), t.obs.admittedFlavors(want))}
}

// write sends one step of the start as a guarded patch, rendered for the
// job as read now (from, or the server's copy when from is stale), and
// says so when it wrote the entries. It returns the job as written and the
// generation the next step may find: the entries' own write moves it.
func (t *TrainJob) write(ctx context.Context, from *trainjob.TrainJob, gen int64, want []shape.Injection, note string, step startStep) (*trainjob.TrainJob, int64, error) {
	moved, injected := false, false
	written := from.DeepCopy()
	_, err := jobpatch.Guarded(ctx, t.deps.client, t.deps.apiReader, written, func(j *trainjob.TrainJob) []shape.Op {
		var ops []shape.Op
		ops, injected, moved = step(j, t.deps.opts.Shape, want, gen)
		return ops
	})
	if err != nil {
		return nil, 0, err
	}
	if moved {
		// The start is given up for this reconcile; the edit's own event
		// brings the next, which computes the job afresh (and Kueue
		// requeues it if its demand changed).
		return nil, 0, fmt.Errorf("TrainJob %s/%s changed while it was being started; starting it from its new spec", t.Namespace, t.Name)
	}
	if injected {
		gen = written.Generation
		t.deps.speak(&t.TrainJob, normal(ReasonInjected, actionStart, fmt.Sprintf(
			"Admitted to flavors %s; injected into %s%s", t.obs.admittedFlavors(want), t.deps.caps.Field, note)))
	}
	return written, gen, nil
}

// workloadUID is wl's UID, empty for none.
func workloadUID(wl *kueue.Workload) types.UID {
	if wl == nil {
		return ""
	}
	return wl.UID
}

// admissionChecksOf are a Workload's admission checks (none without one).
func admissionChecksOf(wl *kueue.Workload) []kueue.AdmissionCheckState {
	if wl == nil {
		return nil
	}
	return wl.Status.AdmissionChecks
}
