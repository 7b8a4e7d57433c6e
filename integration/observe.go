package integration

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// observed is everything a reconcile of one TrainJob knows beyond the job
// itself, read once at its start. The job framework's questions are then
// answered from it with no I/O, so every answer of one reconcile agrees
// with every other, and a read that fails fails the reconcile instead of
// passing for "nothing there".
type observed struct {
	// workload is the job's Workload; nil when it has none (yet).
	workload *kueue.Workload
	// projection is the job's roles and PodSets, computed from Trainer's
	// snapshot of its runtime once taken, from the runtime before; empty
	// when runtimeErr says why they can't be.
	projection
	// runtimeErr: the job's pods can't be computed, for a reason its owner
	// has to fix (runtime missing or unusable, a field Kueue refuses).
	runtimeErr *errRuntime
	// runtimeGone: on Trainer v2.3, the job is projected from its
	// snapshot but the runtime it names no longer exists, so Trainer's
	// webhook refuses every update of it, the start's too. Only looked at
	// while the job is suspended here.
	runtimeGone *errRuntime
	// outgrown: before Trainer's runtime snapshots, the job's JobSet was
	// built for other pods than the job and its runtime now ask for, and
	// JobSet refuses to change them: the job can't start as it is. Only
	// looked at while the job holds, or is held from, a reservation.
	outgrown *errRuntime
	// jobs is the state of the job's child Jobs per replicatedJob.
	jobs []trainer.JobStatus
	// dispatch is what the Workload says of MultiKueue (jobs for
	// MultiKueue only).
	dispatch dispatch
	// clusterQueue reserved quota for the job, read while the job waits to
	// be started (its gang setting); nil otherwise, or when it is gone.
	clusterQueue *kueue.ClusterQueue
}

// observe reads what a reconcile of job needs, from the informer cache but
// for Trainer's runtime snapshot (we keep no ConfigMap cache; a snapshot
// never changes once taken and its projection is memoised).
func (d *deps) observe(ctx context.Context, job *trainjob.TrainJob) (*observed, error) {
	o := &observed{}
	var err error
	if o.workload, err = d.workloadOf(ctx, job); err != nil {
		return nil, err
	}
	o.projection, err = d.project(ctx, job)
	if err != nil && !errors.As(err, &o.runtimeErr) {
		return nil, err
	}
	if o.runtimeGone, err = d.runtimeGone(ctx, job, o); err != nil {
		return nil, err
	}
	if o.jobs, err = d.jobsStatus(ctx, job); err != nil {
		return nil, err
	}
	if o.outgrown, err = d.outgrown(ctx, job, o); err != nil {
		return nil, err
	}
	if runnerOf(job.Spec.ManagedBy) == runRemotely {
		if o.dispatch, err = d.dispatchOf(ctx, o.workload); err != nil {
			return nil, err
		}
	}
	if wl := o.reserved(); wl != nil && wl.Status.Admission != nil && job.Suspended() {
		cq := &kueue.ClusterQueue{}
		err := d.client.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, cq)
		switch {
		case err == nil:
			o.clusterQueue = cq
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading ClusterQueue %s, which admitted the job: %w", wl.Status.Admission.ClusterQueue, err)
		}
	}
	return o, nil
}

// runtimeGone: a suspended job Trainer v2.3 runs from its snapshot, whose
// runtime does not exist. One read from the informer cache, no request.
func (d *deps) runtimeGone(ctx context.Context, job *trainjob.TrainJob, o *observed) (*errRuntime, error) {
	if !d.caps.RuntimeSnapshot || o.runtimeErr != nil || o.workload == nil || !job.Suspended() || runnerOf(job.Spec.ManagedBy) != runLocally {
		return nil, nil
	}
	_, _, err := runtimeVersion(ctx, d.client, job)
	var rtErr *errRuntime
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &rtErr):
		if rtErr.reason != ReasonRuntimeNotFound {
			return nil, nil
		}
		ref, _ := refOf(job)
		return &errRuntime{reason: ReasonRuntimeNotFound, msg: fmt.Sprintf(
			"%s named in spec.runtimeRef does not exist. Trainer runs this job from its snapshot of the runtime, but Trainer's webhook refuses to start a job whose runtime is missing: the job is held (if admitted, its Workload is deactivated and its quota released) and queued again once the runtime exists. Create it again, or recreate the job with an existing runtime", ref)}, nil
	}
	return nil, err
}

// reserved is the job's Workload when it holds a quota reservation.
func (o *observed) reserved() *kueue.Workload {
	if o.workload == nil || !workload.HasQuotaReservation(o.workload) || workloadFinished(o.workload) {
		return nil
	}
	return o.workload
}

// admittedAt is when the job's Workload was admitted; zero when it is not.
func (o *observed) admittedAt() metav1.Time {
	wl := o.reserved()
	if wl == nil {
		return metav1.Time{}
	}
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime
	}
	return metav1.Time{}
}

// workloadFinished: Kueue is done with the Workload.
func workloadFinished(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// workloadOf is the job's Workload: on a MultiKueue worker the prebuilt one
// the manager named, otherwise the one the job framework names after the
// job. nil when there is none, or it is another job's.
func (d *deps) workloadOf(ctx context.Context, job *trainjob.TrainJob) (*kueue.Workload, error) {
	if job.UID == "" {
		return nil, nil
	}
	name := jobframework.PrebuiltWorkloadNameFor(job)
	prebuilt := name != ""
	if !prebuilt {
		name = jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, GVK)
	}
	wl := &kueue.Workload{}
	if err := d.client.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: name}, wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Workload %s/%s of the job: %w", job.Namespace, name, err)
	}
	owner := metav1.GetControllerOfNoCopy(wl)
	// A prebuilt Workload is the job's before the framework marks it so.
	if (owner == nil && !prebuilt) || (owner != nil && owner.UID != job.UID) {
		return nil, nil
	}
	return wl, nil
}

// jobsStatus is the state of the job's child Jobs per replicatedJob: the
// TrainJob's status.jobsStatus, or on Trainer v2.0, which has none, its
// JobSet's status.
func (d *deps) jobsStatus(ctx context.Context, job *trainjob.TrainJob) ([]trainer.JobStatus, error) {
	if !d.caps.NoJobsStatus {
		return job.Status.JobsStatus, nil
	}
	js := &jobsetapi.JobSet{}
	if err := d.client.Get(ctx, client.ObjectKeyFromObject(job), js); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the JobSet of the job: %w", err)
	}
	out := make([]trainer.JobStatus, 0, len(js.Status.ReplicatedJobsStatus))
	for _, s := range js.Status.ReplicatedJobsStatus {
		out = append(out, trainer.JobStatus{
			Name: s.Name, Ready: ptr.To(s.Ready), Succeeded: ptr.To(s.Succeeded),
			Failed: ptr.To(s.Failed), Active: ptr.To(s.Active), Suspended: ptr.To(s.Suspended),
		})
	}
	return out, nil
}

// project is the job's projection, memoised per job spec and runtime
// version: a queued job is reconciled on every status change of its
// Workload while its PodSets change only with its spec or its runtime.
func (d *deps) project(ctx context.Context, job *trainjob.TrainJob) (projection, error) {
	if d.caps.RuntimeSnapshot {
		// Once Trainer took its snapshot the job is built from it, and it
		// never changes: one read per job (a spec edit, our start's
		// included, is projected again from the snapshot read before).
		key := fmt.Sprintf("%s/%d/snapshot", job.UID, job.Generation)
		if p, ok := d.memo.get(key); ok {
			return p, nil
		}
		if rt := d.memo.snapshotOf(job.UID); rt != nil {
			return d.projectFromSnapshot(job, rt, key)
		}
		if d.snapshotMayExist(ctx, job) {
			got, err := d.projectFromSnapshotRead(ctx, job, key)
			if err != nil || got.taken {
				return got.projection, err
			}
		}
	}
	rt, version, err := runtimeVersion(ctx, d.client, job)
	if err != nil {
		return projection{}, err
	}
	key := fmt.Sprintf("%s/%d/%s", job.UID, job.Generation, version)
	if p, ok := d.memo.get(key); ok {
		return p, nil
	}
	return d.projectFrom(job, rt, key)
}

// snapshotProjected is a projection from the job's snapshot; taken is false
// while Trainer has taken none.
type snapshotProjected struct {
	projection
	taken bool
}

// projectFromSnapshotRead reads the job's snapshot and projects it, once
// for all callers at a time: two controllers observe a job at once (the job
// framework's reconcile and the gang keeper, woken by the same
// status write of Trainer's), and each read the snapshot (47 reads for 24
// jobs started together, in the smoke's audit log).
func (d *deps) projectFromSnapshotRead(ctx context.Context, job *trainjob.TrainJob, key string) (snapshotProjected, error) {
	v, err, _ := d.snapshotReads.Do(key, func() (any, error) {
		// A call that just ended projected it.
		if p, ok := d.memo.get(key); ok {
			return snapshotProjected{projection: p, taken: true}, nil
		}
		rt, found, err := readSnapshot(ctx, d.apiReader, d.snapshots, job)
		if err != nil || !found {
			return snapshotProjected{}, err
		}
		p, err := d.projectFromSnapshot(job, rt, key)
		return snapshotProjected{projection: p, taken: true}, err
	})
	got, _ := v.(snapshotProjected)
	return got, err
}

// projectFromSnapshot projects the job from its snapshot rt, and remembers
// rt with the job.
func (d *deps) projectFromSnapshot(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, key string) (projection, error) {
	p, err := d.projectFrom(job, rt, key)
	if err == nil {
		d.memo.rememberSnapshot(job.UID, rt)
	}
	return p, err
}

// snapshotMayExist: the job's snapshot is worth a read. Trainer v2.3 takes
// it before the status write of its first reconcile, so until Trainer has
// written the job's status there is none, or one just taken from the live
// runtime: the reconciles of a burst's queued jobs were a read each for
// nothing, and the status write that follows the snapshot reconciles the
// job again. Unless the runtime changed meanwhile: a job projected before
// from another version of it is read for at once, so an edit racing
// Trainer's status write never books the edited runtime. A spec edit is no
// such reason: our start often comes before Trainer's first reconcile.
func (d *deps) snapshotMayExist(ctx context.Context, job *trainjob.TrainJob) bool {
	if len(job.Status.Conditions) > 0 || len(job.Status.JobsStatus) > 0 {
		return true
	}
	_, version, err := runtimeVersion(ctx, d.client, job)
	if err != nil {
		// The snapshot read and the live one that follows it tell.
		return true
	}
	return d.memo.projectedFromOther(job.UID, version)
}

// projectFrom computes the job's projection from runtime rt and memoises it
// under key.
func (d *deps) projectFrom(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, key string) (projection, error) {
	roles, err := podsets.Roles(job, rt, d.opts.Shape)
	if err != nil {
		return projection{}, &errRuntime{
			reason: ReasonInvalidRuntime,
			msg:    fmt.Sprintf("cannot compute the pods of this TrainJob: %v", err),
		}
	}
	podSets, err := podsets.FromRoles(roles, d.opts.PodSets)
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
	d.memo.put(key, p)
	return p, nil
}
