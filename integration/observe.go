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
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// observed is everything a reconcile of one TrainJob knows beyond the job
// itself, read once at its start. The job framework's questions are then
// answered from it with no I/O, so every answer of one reconcile agrees
// with every other, and a read that fails fails the reconcile instead of
// passing for "nothing there".
type observed struct {
	// runner is who runs the job, decided once from its spec.managedBy.
	runner trainjob.Runner
	// workload is the job's Workload; nil when it has none (yet).
	workload *kueue.Workload
	// Projection is the job's roles and PodSets, computed from Trainer's
	// snapshot of its runtime once taken, from the runtime before; empty
	// when runtimeErr says why they can't be.
	runtimesource.Projection
	// runtimeErr: the job's pods can't be computed, for a reason its owner
	// has to fix (runtime missing or unusable, a field Kueue refuses).
	runtimeErr *runtimesource.Error
	// runtimeGone: on Trainer v2.3, the job is projected from its
	// snapshot but the runtime it names no longer exists, so Trainer's
	// webhook refuses every update of it, the start's too. Only looked at
	// while the job is suspended here.
	runtimeGone *runtimesource.Error
	// outgrown: before Trainer's runtime snapshots, the job's JobSet was
	// built for other pods than the job and its runtime now ask for, and
	// JobSet refuses to change them: the job can't start as it is. Only
	// looked at while the job holds, or is held from, a reservation.
	outgrown *runtimesource.Error
	// jobs is the state of the job's child Jobs per replicatedJob.
	jobs []trainer.JobStatus
	// dispatch is what the Workload says of MultiKueue (jobs for
	// MultiKueue only).
	dispatch dispatch
	// clusterQueue reserved quota for the job, read while the job waits to
	// be started (its gang setting); nil otherwise, or when it is gone.
	clusterQueue *kueue.ClusterQueue
	// released: the job's Workload is finished and released (released);
	// nothing else is read.
	released bool
}

// observe reads what a reconcile of job, run by runner, needs: from the
// informer cache but for Trainer's runtime snapshot (we keep no ConfigMap
// cache; a snapshot never changes once taken and its projection is
// memoised). The caller decided who runs the job before it asked: the
// observation carries that decision, so it is made once per reconcile.
func (d *deps) observe(ctx context.Context, job *trainjob.TrainJob, runner trainjob.Runner) (*observed, error) {
	o := &observed{runner: runner}
	var err error
	if o.workload, err = d.workloadOf(ctx, job); err != nil {
		return nil, err
	}
	if o.released = released(job, o.workload); o.released {
		return o, nil
	}
	o.Projection, err = d.runtimes.Project(ctx, job)
	if err != nil && !errors.As(err, &o.runtimeErr) {
		return nil, err
	}
	if o.runtimeErr == nil && o.workload != nil && job.Suspended() && o.runner == trainjob.RunLocally {
		// Only a start is at stake, and only we start the job here.
		if o.runtimeGone, err = d.runtimes.Gone(ctx, job); err != nil {
			return nil, err
		}
	}
	if o.jobs, err = d.jobsStatus(ctx, job); err != nil {
		return nil, err
	}
	if o.outgrown, err = d.outgrown(ctx, job, o); err != nil {
		return nil, err
	}
	if o.runner == trainjob.RunRemotely {
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

// workloadOf is the job's Workload (jobworkload.Of): on a MultiKueue
// worker the prebuilt one the manager named, otherwise the one the job
// framework names after the job. nil when there is none, or it is another
// job's.
func (d *deps) workloadOf(ctx context.Context, job *trainjob.TrainJob) (*kueue.Workload, error) {
	return jobworkload.Of(ctx, d.client, job)
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

// outgrown tells whether job, about to start, can't: before its runtime
// snapshots (v2.3), Trainer built the job's JobSet when the job arrived and
// re-applies it from the live runtime, and JobSet refuses changes to its
// pods. A runtime edited since, in what decides quota, leaves the job
// unable to start, its unsuspend refused with the rest ("field is
// immutable"). The JobSet is read only then: while the job's Workload holds
// a reservation, or is held by us from one, and the job is suspended; one
// uncached read (Trainer v2.0 has JobSets in the cache) per reconcile of
// those few jobs.
func (d *deps) outgrown(ctx context.Context, job *trainjob.TrainJob, o *observed) (*runtimesource.Error, error) {
	if d.caps.RuntimeSnapshot || o.runtimeErr != nil || !job.Suspended() || o.runner != trainjob.RunLocally || o.workload == nil {
		return nil, nil
	}
	if _, held := o.workload.Annotations[names.HeldForRuntimeAnnotation]; !held && o.reserved() == nil {
		return nil, nil
	}
	reader := d.apiReader
	if d.caps.NoJobsStatus {
		reader = d.client
	}
	js := &jobsetapi.JobSet{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(job), js); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil // Trainer builds it from what it reads now
		}
		return nil, fmt.Errorf("reading the JobSet of the job: %w", err)
	}
	built := make([]podsets.Built, len(js.Spec.ReplicatedJobs))
	for i, rj := range js.Spec.ReplicatedJobs {
		built[i] = podsets.Built{Name: rj.Name, Replicas: rj.Replicas, Template: rj.Template.Spec.Template}
		if p := rj.Template.Spec.Parallelism; p != nil {
			built[i].PodsPerReplica = *p
		}
	}
	diff := podsets.Outgrown(built, o.Roles)
	if diff == "" {
		return nil, nil
	}
	ref := o.Ref
	return &runtimesource.Error{Reason: ReasonJobSetOutOfDate, Message: fmt.Sprintf(
		"the pods of this job as %s and the job now say differ from the JobSet Trainer built when the job was created (%s), and JobSet refuses changes to its pods: the job can't start as it is. Its Workload is held out of the queue, holding no quota, until they agree again: restore %s to what it was when the job was created, or delete the TrainJob and create it again",
		ref, diff, ref)}, nil
}
