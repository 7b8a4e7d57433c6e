package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// GVK of the jobs we integrate.
var GVK = trainer.GroupVersion.WithKind(trainer.TrainJobKind)

const (
	// ControllerName is Trainer's default spec.managedBy.
	ControllerName = "trainer.kubeflow.org/trainjob-controller"
)

// deps are what a TrainJob needs from its reconciler to answer the job
// framework: read-only and shared by every job of one reconciler.
type deps struct {
	client    client.Client // cached reads; writes go to the API server
	apiReader client.Reader // uncached reads, when the cache is stale
	recorder  events.EventRecorder
	opts      Options
	metrics   *Metrics
	// memo keeps PodSets across reconciles, per job spec and runtime.
	memo *podSetMemo
	// said keeps permanent refusals to one event per Workload.
	said *saidOnce
	// twoRequestStart remembers that the installed Trainer refused to take
	// an injection and the unsuspend in one request (v2.2.0).
	twoRequestStart atomic.Bool
}

// TrainJob adapts a Trainer TrainJob to Kueue's job framework. A new one is
// made for every reconcile, so what it computes is computed once per
// reconcile however often the framework asks.
type TrainJob struct {
	trainjob.TrainJob
	deps *deps

	computed     bool
	roles        []podsets.Role
	podSets      []kueue.PodSet
	coscheduling *trainer.CoschedulingPodGroupPolicySource
	err          error
	// runtimeErr is err when it is the user's to fix (runtime missing or
	// unusable): terminal until the job or its runtime changes. A job
	// admitted while its runtime is unusable gives its reservation back at
	// the start; one whose runtime is missing waits for it to return, as a
	// queued one does, holding what it was admitted with.
	runtimeErr *errRuntime

	jobs *[]trainer.JobStatus // memo of jobsStatus

	wlRead bool
	wl     *kueue.Workload // memo of workload
	remote *bool           // memo of runsRemotely
}

var (
	_ jobframework.GenericJob              = (*TrainJob)(nil)
	_ jobframework.JobWithCustomStop       = (*TrainJob)(nil)
	_ jobframework.JobWithReclaimablePods  = (*TrainJob)(nil)
	_ jobframework.JobWithManagedBy        = (*TrainJob)(nil)
	_ jobframework.JobWithPriorityClass    = (*TrainJob)(nil)
	_ jobframework.JobWithPodLabelSelector = (*TrainJob)(nil)
	_ jobframework.JobWithSkip             = (*TrainJob)(nil)
)

func (t *TrainJob) Object() client.Object        { return &t.TrainJob }
func (t *TrainJob) GVK() schema.GroupVersionKind { return GVK }
func (t *TrainJob) Suspend()                     { t.Spec.Suspend = ptr.To(true) }

// IsSuspended: a job dispatched by MultiKueue stays suspended here for ever;
// to the job framework it is running while a worker runs it, so the
// framework never tries to start it on this cluster.
func (t *TrainJob) IsSuspended() bool {
	if runnerOf(t.Spec.ManagedBy) == runRemotely {
		return !t.runsRemotely(context.Background())
	}
	return ptr.Deref(t.Spec.Suspend, false)
}

// IsActive reports whether any child Job still has running pods on this
// cluster. A dispatched job has none here, whatever the status copied from
// its worker says.
func (t *TrainJob) IsActive() bool {
	if runnerOf(t.Spec.ManagedBy) == runRemotely {
		return false
	}
	for _, s := range t.jobsStatus(context.Background()) {
		if ptr.Deref(s.Active, 0) > 0 {
			return true
		}
	}
	return false
}

// jobsStatus is the state of the job's child Jobs per replicatedJob: the
// TrainJob's status.jobsStatus, or on Trainer v2.0, which has none, its
// JobSet's status read from the cache.
func (t *TrainJob) jobsStatus(ctx context.Context) []trainer.JobStatus {
	if !t.deps.opts.Shape.Rules().NoJobsStatus {
		return t.Status.JobsStatus
	}
	if t.jobs != nil {
		return *t.jobs
	}
	var out []trainer.JobStatus
	js := &jobsetapi.JobSet{}
	if err := t.deps.client.Get(ctx, client.ObjectKeyFromObject(&t.TrainJob), js); err == nil {
		for _, s := range js.Status.ReplicatedJobsStatus {
			out = append(out, trainer.JobStatus{
				Name: s.Name, Ready: ptr.To(s.Ready), Succeeded: ptr.To(s.Succeeded),
				Failed: ptr.To(s.Failed), Active: ptr.To(s.Active), Suspended: ptr.To(s.Suspended),
			})
		}
	}
	t.jobs = &out
	return out
}

func (t *TrainJob) PodLabelSelector() string {
	return fmt.Sprintf("%s=%s", jobsetapi.JobSetNameKey, t.Name)
}

func (t *TrainJob) Finished(context.Context) (string, bool, bool) {
	if c := apimeta.FindStatusCondition(t.Status.Conditions, trainer.TrainJobComplete); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message, true, true
	}
	if c := apimeta.FindStatusCondition(t.Status.Conditions, trainer.TrainJobFailed); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message, false, true
	}
	return "", false, false
}

// compute projects the job onto its roles and PodSets once per reconcile.
func (t *TrainJob) compute(ctx context.Context) error {
	if t.computed {
		return t.err
	}
	t.computed = true
	var p projection
	p, t.err = t.project(ctx)
	t.roles, t.podSets, t.coscheduling = p.roles, p.podSets, p.coscheduling
	if t.err != nil {
		var rtErr *errRuntime
		if errors.As(t.err, &rtErr) {
			t.runtimeErr = rtErr
			t.deps.metrics.podSetError(rtErr.reason)
			t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, rtErr.reason, actionComputePodSets, "%s", rtErr.msg)
			// The runtime watch requeues the job when the runtime changes:
			// retrying before that would only spin.
			t.err = jobframework.UnretryableError(rtErr.msg)
		}
	}
	return t.err
}

func (t *TrainJob) project(ctx context.Context) (projection, error) {
	if t.deps.opts.Shape.Rules().RuntimeSnapshot {
		// Once Trainer took its snapshot the job is built from it, and it
		// never changes: one read per spec generation.
		key := fmt.Sprintf("%s/%d/snapshot", t.UID, t.Generation)
		if p, ok := t.deps.memo.get(key); ok {
			return p, nil
		}
		rt, found, err := readSnapshot(ctx, t.deps.apiReader, &t.TrainJob)
		if err != nil {
			return projection{}, err
		}
		if found {
			return t.projectFrom(rt, key)
		}
	}
	rt, version, err := runtimeVersion(ctx, t.deps.client, &t.TrainJob)
	if err != nil {
		return projection{}, err
	}
	key := fmt.Sprintf("%s/%d/%s", t.UID, t.Generation, version)
	if p, ok := t.deps.memo.get(key); ok {
		return p, nil
	}
	return t.projectFrom(rt, key)
}

// projectFrom computes the job's projection from runtime rt and memoises it
// under key.
func (t *TrainJob) projectFrom(rt *trainer.TrainingRuntimeSpec, key string) (projection, error) {
	roles, err := podsets.Roles(&t.TrainJob, rt, t.deps.opts.Shape)
	if err != nil {
		return projection{}, &errRuntime{
			reason: ReasonInvalidRuntime,
			msg:    fmt.Sprintf("cannot compute the pods of this TrainJob: %v", err),
		}
	}
	podSets, err := podsets.FromRoles(roles, t.deps.opts.PodSets)
	if err != nil {
		// Pure and deterministic: only an edit of the job or its runtime,
		// both watched, can change the answer.
		return projection{}, &errRuntime{
			reason: ReasonInvalidRuntime,
			msg:    fmt.Sprintf("cannot compute the PodSets of this TrainJob: %v", err),
		}
	}
	p := projection{roles: roles, podSets: podSets}
	if rt.PodGroupPolicy != nil && rt.PodGroupPolicy.Coscheduling != nil {
		p.coscheduling = rt.PodGroupPolicy.Coscheduling.DeepCopy()
	}
	t.deps.memo.put(key, p)
	return p, nil
}

// PodSets are the job's roles as Trainer runs them. A job that holds a quota
// reservation keeps reporting the PodSets it was admitted with while it asks
// for the same pods: a running job can't change shape (its JobSet is
// immutable), so an edited runtime must not stop it, and a Workload written
// by another integration stays matched when only non-scheduling details of
// its templates differ from ours.
func (t *TrainJob) PodSets(ctx context.Context, _ client.Client) ([]kueue.PodSet, error) {
	return t.currentPodSets(ctx)
}

func (t *TrainJob) currentPodSets(ctx context.Context) ([]kueue.PodSet, error) {
	reserved := t.reservedWorkload(ctx)
	if reserved != nil && !t.IsSuspended() {
		return reserved.Spec.DeepCopy().PodSets, nil
	}
	if err := t.compute(ctx); err != nil {
		if reserved != nil && t.runtimeErr != nil && t.runtimeErr.reason != ReasonRuntimeNotFound {
			// The reservation stands on what was computed before: report
			// it, so the job framework goes on to the start, which gives
			// the quota back (start).
			return reserved.Spec.DeepCopy().PodSets, nil
		}
		return nil, err
	}
	if reserved != nil && sameDemand(reserved.Spec.PodSets, t.podSets) && samePlacement(reserved.Spec.PodSets, t.podSets) {
		return reserved.Spec.DeepCopy().PodSets, nil
	}
	out := make([]kueue.PodSet, len(t.podSets))
	for i := range t.podSets {
		t.podSets[i].DeepCopyInto(&out[i])
	}
	return out, nil
}

// reservedWorkload is the job's Workload when it holds a quota reservation.
func (t *TrainJob) reservedWorkload(ctx context.Context) *kueue.Workload {
	wl := t.workload(ctx)
	if wl == nil || !workload.HasQuotaReservation(wl) || workloadFinished(wl) {
		return nil
	}
	return wl
}

// workload is the job's Workload, read once per reconcile from the cache:
// on a MultiKueue worker the prebuilt one the manager named, otherwise the
// one the job framework names after the job.
func (t *TrainJob) workload(ctx context.Context) *kueue.Workload {
	if t.wlRead {
		return t.wl
	}
	t.wlRead = true
	if t.UID == "" || t.deps == nil {
		return nil
	}
	name := jobframework.PrebuiltWorkloadNameFor(&t.TrainJob)
	prebuilt := name != ""
	if !prebuilt {
		name = jobframework.GetWorkloadNameForOwnerWithGVK(t.Name, t.UID, GVK)
	}
	wl := &kueue.Workload{}
	if err := t.deps.client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: name}, wl); err != nil {
		return nil
	}
	owner := metav1.GetControllerOfNoCopy(wl)
	// A prebuilt Workload is the job's before the framework marks it so.
	if (owner == nil && !prebuilt) || (owner != nil && owner.UID != t.UID) {
		return nil
	}
	t.wl = wl
	return wl
}

// workloadFinished: Kueue is done with the Workload.
func workloadFinished(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// sameDemand: same roles, same counts, same per-pod requests.
func sameDemand(a, b []kueue.PodSet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Count != b[i].Count {
			return false
		}
		if !equality.Semantic.DeepEqual(quota.PodRequests(&a[i].Template.Spec), quota.PodRequests(&b[i].Template.Spec)) {
			return false
		}
	}
	return true
}

// samePlacement: same nodeSelector, affinity, tolerations and topology
// request per role. A queued job edited in any of them after its quota was
// reserved must be placed anew: reporting the reserved PodSets would start
// it where the user's edit said not to.
func samePlacement(a, b []kueue.PodSet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i].Template.Spec, &b[i].Template.Spec
		if !maps.Equal(x.NodeSelector, y.NodeSelector) ||
			!equality.Semantic.DeepEqual(x.Affinity, y.Affinity) ||
			!equality.Semantic.DeepEqual(a[i].TopologyRequest, b[i].TopologyRequest) ||
			!sameTolerations(x.Tolerations, y.Tolerations) {
			return false
		}
	}
	return true
}

// sameTolerations compares as sets: order does not matter to the scheduler.
func sameTolerations(a, b []corev1.Toleration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.ContainsFunc(b, func(t corev1.Toleration) bool { return equality.Semantic.DeepEqual(a[i], t) }) {
			return false
		}
	}
	return true
}

// PodsReady: every role due to run now is running or done. A job starts in
// waves (initializers, then trainer nodes), so this is the wave that runs,
// read from jobsStatus against the memoised roles; nothing is rebuilt.
func (t *TrainJob) PodsReady(ctx context.Context, _ client.Client) bool {
	roles, err := t.runningRoles(ctx)
	if err != nil {
		return false
	}
	return quota.Due(roles, t.progress(ctx))
}

// runningRoles are the job's roles as they run: while it holds a
// reservation, fitted to the PodSets it was admitted with, since its JobSet
// can't follow a runtime edited since.
func (t *TrainJob) runningRoles(ctx context.Context) ([]podsets.Role, error) {
	if err := t.compute(ctx); err != nil {
		return nil, err
	}
	if wl := t.reservedWorkload(ctx); wl != nil {
		return podsets.Admitted(t.roles, wl.Spec.PodSets), nil
	}
	return t.roles, nil
}

// ReclaimablePods reports the pods of roles whose Jobs already succeeded,
// typically the initializers once the trainer nodes started: their quota can
// go to waiting jobs. Roles are reported in runtime order.
func (t *TrainJob) ReclaimablePods(ctx context.Context, _ client.Client) ([]kueue.ReclaimablePod, error) {
	jobs := t.jobsStatus(ctx)
	if len(jobs) == 0 {
		return nil, nil
	}
	roles, err := t.runningRoles(ctx)
	if err != nil {
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
	return out, nil
}

// PriorityClass is the trainer step's priority class, not whichever role
// happens to come first in the runtime.
func (t *TrainJob) PriorityClass() string {
	if t.compute(context.Background()) != nil {
		return ""
	}
	return podsets.PriorityClass(t.roles)
}

func (t *TrainJob) CanDefaultManagedBy() bool {
	return t.Spec.ManagedBy == nil || *t.Spec.ManagedBy == ControllerName
}
func (t *TrainJob) ManagedBy() *string             { return t.Spec.ManagedBy }
func (t *TrainJob) SetManagedBy(managedBy *string) { t.Spec.ManagedBy = managedBy }
