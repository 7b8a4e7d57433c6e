package integration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

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
	ref, err := runtimesource.RefOf(job)
	if err != nil {
		return nil, nil
	}
	return &runtimesource.Error{Reason: ReasonJobSetOutOfDate, Message: fmt.Sprintf(
		"the pods of this job as %s and the job now say differ from the JobSet Trainer built when the job was created (%s), and JobSet refuses changes to its pods: the job can't start as it is. Its Workload is held out of the queue, holding no quota, until they agree again: restore %s to what it was when the job was created, or delete the TrainJob and create it again",
		ref, diff, ref)}, nil
}
