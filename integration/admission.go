package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// RunWithPodSetsInfo writes the admission into the job's override entries and
// leaves t unsuspended in memory; the job framework then sends spec.suspend
// with the resourceVersion our write produced. Trainer before v2.2.1 accepts
// override changes only on a suspended job, hence two requests.
func (t *TrainJob) RunWithPodSetsInfo(ctx context.Context, _ client.Client, infos []podset.PodSetInfo) error {
	if runnerOf(t.Spec.ManagedBy) == runRemotely {
		return t.refuseLocalRun(ctx)
	}
	err := t.start(ctx, infos)
	if err != nil && refused(err) {
		err = t.startRefused(ctx, err)
	}
	var re *reasonError
	switch {
	case err == nil:
		t.deps.metrics.injected("")
		t.deps.metrics.started(t.admittedAt(ctx))
	case errors.As(err, &re):
		t.deps.metrics.injected(re.reason)
	default:
		t.deps.metrics.injected(reasonAPIError)
	}
	return err
}

// startRefused: the API server refused the start for what it contains
// (validation, Trainer's webhook, an admission policy). Sending it again
// would get the same answer, so the job is not started and the error is
// permanent: the job framework finishes the Workload and its quota goes to
// jobs that can run.
func (t *TrainJob) startRefused(ctx context.Context, err error) error {
	msg := fmt.Sprintf("the API server refused to start this TrainJob with its admission: %v; the Workload is finished and its quota released. Fix what the message names and create the job again", err)
	if t.deps.said.first(workloadUID(t.reservedWorkload(ctx)), ReasonStartRefused) {
		t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonStartRefused, actionStart, "%s", msg)
	}
	return &reasonError{ReasonStartRefused, podset.BadPodSetsUpdateError("spec", err)}
}

// workloadUID is wl's UID, empty for none.
func workloadUID(wl *kueue.Workload) types.UID {
	if wl == nil {
		return ""
	}
	return wl.UID
}

// reasonError is a start refused for a reason users see as an event.
type reasonError struct {
	reason string
	error
}

func (e *reasonError) Unwrap() error { return e.error }

// admittedAt is when the job's Workload was admitted.
func (t *TrainJob) admittedAt(ctx context.Context) time.Time {
	wl := t.reservedWorkload(ctx)
	if wl == nil {
		return time.Time{}
	}
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

func (t *TrainJob) start(ctx context.Context, infos []podset.PodSetInfo) error {
	templates, err := t.currentPodSets(ctx)
	if err != nil {
		return err
	}
	if len(infos) != len(templates) {
		return podset.BadPodSetsInfoLenError(len(templates), len(infos))
	}
	if _, v20 := t.deps.opts.Shape.(shape.PodSpecOverrides); v20 {
		if err := t.refuseTopologyOnV20(infos); err != nil {
			return err
		}
	}
	want := make([]shape.Injection, 0, len(infos))
	for i := range infos {
		info := &infos[i]
		idx := slices.IndexFunc(templates, func(ps kueue.PodSet) bool { return ps.Name == info.Name })
		if idx < 0 {
			return podset.BadPodSetsUpdateError("name", fmt.Errorf("admitted PodSet %q is not a replicatedJob of the runtime", info.Name))
		}
		inj, err := t.injection(ctx, &templates[idx].Template, info)
		if err != nil {
			return err
		}
		want = append(want, inj)
	}
	if _, v20 := t.deps.opts.Shape.(shape.PodSpecOverrides); v20 {
		if path, roles := shape.SharedEntryConflict(&t.TrainJob, want); path != "" {
			msg := fmt.Sprintf("%s targets roles %s, which were admitted to different placements (%s); one entry can place its roles in one way only, so the job is not started and its quota is released. Give each of those replicatedJobs an entry of its own, or queue the job where its roles share a flavor",
				path, strings.Join(roles, ", "), t.admittedFlavors(ctx, want))
			t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonSharedOverrideConflict, actionStart, "%s", msg)
			return &reasonError{ReasonSharedOverrideConflict, podset.BadPodSetsUpdateError("podSpecOverrides", errors.New(msg))}
		}
	}
	if err := t.compute(ctx); err != nil {
		if t.runtimeErr != nil && t.runtimeErr.reason != ReasonRuntimeNotFound {
			// Admitted, but the pods can no longer be computed (the runtime
			// was made unusable, or Trainer's snapshot of it is): Trainer
			// could not run them either. A permanent error: the job framework
			// finishes the Workload and the quota goes back, instead of a
			// reservation held by a job that can't start.
			return &reasonError{t.runtimeErr.reason, podset.BadPodSetsUpdateError("runtime",
				fmt.Errorf("%s; the job is not started and its quota reservation is released", t.runtimeErr.msg))}
		}
		return err
	}
	plans, err := t.ownGangs(ctx)
	if err != nil {
		return err
	}
	if len(plans) > 0 {
		if err := t.applyPodGroups(ctx, plans); err != nil {
			return err
		}
		withPodGroupLabels(want, plans)
	}
	t.warnGangTimeouts(plans)
	if s, ok := t.deps.opts.Shape.(shape.RuntimePatches); ok && s.UnsuspendsInOnePatch && !t.deps.twoRequestStart.Load() {
		err := t.startInOneRequest(ctx, want, gangNote(plans))
		if !forbidsUnsuspendWithPatch(err) {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("The installed Trainer takes runtime patches only on a suspended TrainJob (v2.2.0): starting jobs in two requests from now on")
		t.deps.twoRequestStart.Store(true)
	}
	// Two requests: Trainer takes override changes only on a suspended job.
	gen, moved := t.Generation, false
	written := t.TrainJob.DeepCopy()
	injected, err := patchGuarded(ctx, t.deps.client, t.deps.apiReader, written, func(j *trainjob.TrainJob) []shape.Op {
		var ops []shape.Op
		ops, moved = injectOps(j, t.deps.opts.Shape, want, gen)
		return ops
	})
	if err != nil {
		return err
	}
	if moved {
		return t.specMoved()
	}
	if injected {
		gen = written.Generation
		t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeNormal, ReasonInjected, actionStart,
			"Admitted to flavors %s; injected into %s%s", t.admittedFlavors(ctx, want), t.deps.opts.Shape.Name(), gangNote(plans))
	}
	// The unsuspend is ours too, guarded like the injection: a copy that
	// turns out stale is read again, and a job someone already started (a
	// second reconcile on a lagging cache) is left alone.
	if _, err := patchGuarded(ctx, t.deps.client, t.deps.apiReader, written, func(j *trainjob.TrainJob) []shape.Op {
		var ops []shape.Op
		ops, moved = unsuspendOps(j, t.deps.opts.Shape, want, gen)
		return ops
	}); err != nil {
		return err
	}
	if moved {
		return t.specMoved()
	}
	// t stays as read: the job framework's own patch afterwards is empty and
	// not sent (skipEmptyPatches).
	t.ResourceVersion = ""
	return nil
}

// startInOneRequest injects and unsuspends in one guarded JSON Patch, which
// Trainer v2.2.1+ accepts. t stays as read, so the job framework's own
// patch afterwards is empty and not sent.
func (t *TrainJob) startInOneRequest(ctx context.Context, want []shape.Injection, note string) error {
	injected, moved := false, false
	written := t.TrainJob.DeepCopy()
	_, err := patchGuarded(ctx, t.deps.client, t.deps.apiReader, written, func(j *trainjob.TrainJob) []shape.Op {
		var ops []shape.Op
		ops, injected, moved = oneRequestOps(j, t.deps.opts.Shape, want, t.Generation)
		return ops
	})
	if err != nil {
		return err
	}
	if moved {
		return t.specMoved()
	}
	if injected {
		t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeNormal, ReasonInjected, actionStart,
			"Admitted to flavors %s; injected into %s%s", t.admittedFlavors(ctx, want), t.deps.opts.Shape.Name(), note)
	}
	t.ResourceVersion = ""
	return nil
}

// The steps of a start, rendered for the job as read now (a guarded write
// re-reads it when our copy was stale). moved: its spec is no longer the
// one (generation gen) the admission's entries were computed from — the
// user edited it meanwhile (spec.trainer, overrides) — and nothing may be
// written: the job would start with pods the reservation was not made for.

// injectOps: the admission's entries, on a suspended job.
func injectOps(j *trainjob.TrainJob, s shape.Shape, want []shape.Injection, gen int64) ([]shape.Op, bool) {
	if j.Generation != gen {
		return nil, true
	}
	return s.Inject(j, want), false
}

// unsuspendOps: spec.suspend=false, once the entries are exactly ours; a job
// someone already started (a second reconcile on a lagging cache) is left
// alone.
func unsuspendOps(j *trainjob.TrainJob, s shape.Shape, want []shape.Injection, gen int64) ([]shape.Op, bool) {
	if !ptr.Deref(j.Spec.Suspend, false) {
		return nil, false
	}
	if j.Generation != gen || s.Inject(j, want) != nil {
		return nil, true
	}
	return []shape.Op{{Op: "replace", Path: "/spec/suspend", Value: false}}, false
}

// oneRequestOps: the entries and spec.suspend=false together (Trainer
// v2.2.1+); injected says whether entries are written.
func oneRequestOps(j *trainjob.TrainJob, s shape.Shape, want []shape.Injection, gen int64) (ops []shape.Op, injected, moved bool) {
	if !ptr.Deref(j.Spec.Suspend, false) {
		return nil, false, false // started already, by a reconcile on fresher data
	}
	if j.Generation != gen {
		return nil, false, true
	}
	ops = s.Inject(j, want)
	return append(ops, shape.Op{Op: "replace", Path: "/spec/suspend", Value: false}), ops != nil, false
}

// specMoved: the start is given up for this reconcile; the edit's own event
// brings the next, which computes the job afresh (and Kueue requeues it if
// its demand changed).
func (t *TrainJob) specMoved() error {
	return fmt.Errorf("TrainJob %s/%s changed while it was being started; starting it from its new spec", t.Namespace, t.Name)
}

// refuseTopologyOnV20: Trainer v2.0's podSpecOverrides carry no metadata,
// so Kueue's podset label and workload annotation can't reach the pods and
// the topology ungater would never find them: pods gated for ever.
func (t *TrainJob) refuseTopologyOnV20(infos []podset.PodSetInfo) error {
	for i := range infos {
		if slices.ContainsFunc(infos[i].SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.TopologySchedulingGate }) {
			msg := fmt.Sprintf("role %q was admitted with topology-aware scheduling, which Trainer v2.0 can't carry out (spec.podSpecOverrides has no pod labels or annotations for Kueue's ungater); the job is not started. Use a ClusterQueue without a topology for Trainer v2.0 jobs, or upgrade Trainer to v2.1+", infos[i].Name)
			t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonTopologyUnsupported, actionStart, "%s", msg)
			return &reasonError{ReasonTopologyUnsupported, podset.BadPodSetsUpdateError("schedulingGates", errors.New(msg))}
		}
	}
	return nil
}

// forbidsUnsuspendWithPatch: Trainer v2.2.0's webhook refuses runtime patch
// changes on a TrainJob that is unsuspended by the same request.
func forbidsUnsuspendWithPatch(err error) bool {
	return err != nil && strings.Contains(err.Error(), "can only be modified when the TrainJob is suspended")
}

// injection is what the pods of one role must get on top of their template.
func (t *TrainJob) injection(ctx context.Context, tmpl *corev1.PodTemplateSpec, info *podset.PodSetInfo) (shape.Injection, error) {
	for _, k := range sortedKeys(info.NodeSelector) {
		if have, ok := tmpl.Spec.NodeSelector[k]; ok && have != info.NodeSelector[k] {
			msg := fmt.Sprintf("role %q: admission to flavor(s) %s sets nodeSelector %s=%s, but the pod template (runtime or spec overrides) requires %s=%s; the job is not started. Remove the key from the template or send the job to a queue whose flavors agree",
				info.Name, t.flavorsOf(ctx, info.Name), k, info.NodeSelector[k], k, have)
			t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonNodeSelectorConflict, actionStart, "%s", msg)
			return shape.Injection{}, &reasonError{ReasonNodeSelectorConflict, podset.BadPodSetsUpdateError("nodeSelector", fmt.Errorf("%s", msg))}
		}
	}
	tolerations := slices.Clone(tmpl.Spec.Tolerations)
	for _, tol := range info.Tolerations {
		if !slices.ContainsFunc(tolerations, func(have corev1.Toleration) bool {
			return have.MatchToleration(&tol) && have.Value == tol.Value && ptr.Equal(have.TolerationSeconds, tol.TolerationSeconds)
		}) {
			tolerations = append(tolerations, tol)
		}
	}
	if len(info.Tolerations) == 0 {
		// Nothing to add: leave the pods' tolerations to the template.
		tolerations = nil
	}
	return shape.Injection{
		Name:            string(info.Name),
		Labels:          info.Labels,
		Annotations:     info.Annotations,
		NodeSelector:    info.NodeSelector,
		Tolerations:     tolerations,
		SchedulingGates: info.SchedulingGates,
	}, nil
}

// admittedFlavors says which flavors each injected role got, for events.
func (t *TrainJob) admittedFlavors(ctx context.Context, roles []shape.Injection) string {
	parts := make([]string, 0, len(roles))
	for _, r := range roles {
		parts = append(parts, r.Name+"→"+t.flavorsOf(ctx, kueue.NewPodSetReference(r.Name)))
	}
	return strings.Join(parts, " ")
}

// flavorsOf names the flavors assigned to a PodSet, for messages.
func (t *TrainJob) flavorsOf(ctx context.Context, name kueue.PodSetReference) string {
	wl := t.reservedWorkload(ctx)
	if wl == nil || wl.Status.Admission == nil {
		return "(unknown)"
	}
	set := map[string]bool{}
	for _, a := range wl.Status.Admission.PodSetAssignments {
		if a.Name != name {
			continue
		}
		for _, f := range a.Flavors {
			set[string(f)] = true
		}
	}
	names := sortedKeys(set)
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ",")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
