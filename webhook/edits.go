package webhook

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Edits by anyone but trainjob-kueue that a queued job can't take.

// queuedStart refuses a user's spec.suspend=false on a job Kueue queues:
// it starts when Kueue admits it, on the flavors Kueue assigns. Re-suspending
// it afterwards comes too late on Trainer v2.3, whose JobSet is already
// built and unsuspended with it, so pods bind outside every flavor before
// the reconcile catches up.
func (w *Webhook) queuedStart(old, job *integration.TrainJob) field.ErrorList {
	if !old.Suspended() || job.Suspended() || job.Runner() != trainjob.RunLocally {
		return nil
	}
	if !w.opts.ManageJobsWithoutQueueName && jobframework.QueueName(job) == "" {
		return nil // not Kueue's: the job is its owner's to start
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "suspend"),
		fmt.Sprintf("this TrainJob is queued in Kueue: trainjob-kueue starts it when Kueue admits it, on the flavors Kueue assigns. Wait for the admission (kubectl trainjob-kueue explain -n %s %s says what it waits for), or take it out of Kueue first (remove the %s label while it is suspended) and start it after",
			job.Namespace, job.Name, queueLabel))}
}

// fixedCounts refuses edits of spec.trainer once the job exists. Every
// supported Trainer release (v2.0 to v2.3) builds the job's JobSet at its
// first reconcile, while the job queues, and re-applies it from then on; the
// JobSet each pins refuses any change to its replicatedJobs but the
// scheduling fields Kueue sets (numNodes, resources, image, env: "field is
// immutable"). Such an edit would leave the job unable to start, holding
// the quota booked for the new pods.
func (w *Webhook) fixedCounts(old, job *trainjob.TrainJob) field.ErrorList {
	if equality.Semantic.DeepEqual(old.Spec.Trainer, job.Spec.Trainer) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "trainer"),
		"the installed Trainer built this job's JobSet when the job was created, and JobSet refuses changes to its pods (numNodes, resources) afterwards: the job could never start and would hold its quota. Delete the TrainJob and create it again with the new values")}
}
