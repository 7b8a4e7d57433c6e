package webhook

import (
	"context"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// JobSets keeps Kueue's queueing off the JobSets Trainer creates for
// TrainJobs, as Kueue's built-in TrainJob integration does by its mere
// being on: Kueue's JobSet webhook skips a JobSet whose owner is a kind of
// an enabled Kueue integration, and TrainJob is none under ours. In a
// namespace with a LocalQueue named default (LocalQueueDefaulting) that
// webhook would give the JobSet of every TrainJob the queue-name label
// (and suspend it, and hand it to MultiKueue when that queue dispatches),
// and Kueue's JobSet integration a Workload of its own beside the
// TrainJob's: the job's quota booked twice. A TrainJob is queued as a
// whole, once, as its own Workload; its JobSet never is.
//
// Only a JobSet whose controller is a TrainJob by name and UID (lineage)
// is given back; any other keeps Kueue's queueing, however it is labelled
// or named. What it does depends on the JobSet alone, not on this
// replica's mode: Kueue's webhook queued the JobSet, so Kueue's built-in
// TrainJob integration is not on (it would have skipped it), whatever this
// replica was last told (a switch turns the two sides over one after the
// other).
//
// matchConditions send it every JobSet a TrainJob controls, by its owner
// alone (config/webhook/selectors.yaml): so the API server calls it in its
// first round whichever configuration sorts first, and again should
// Kueue's webhook queue the JobSet after it (reinvocationPolicy IfNeeded;
// a webhook a first round skipped is never reinvoked). The order the API
// server calls them in does not matter; other JobSets never wait for us.
type JobSets struct {
	lineage lineage
}

var _ admission.Defaulter[*jobsetapi.JobSet] = (*JobSets)(nil)

// SetupJobSets registers the JobSet webhook.
func SetupJobSets(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &jobsetapi.JobSet{}).WithDefaulter(&JobSets{lineage: lineageOf(mgr)}).Complete()
}

// failurePolicy Fail: a TrainJob's JobSet let through queued would book
// its quota twice; Trainer retries a refused create.
// +kubebuilder:webhook:path=/mutate-jobset-x-k8s-io-v1alpha2-jobset,mutating=true,failurePolicy=fail,sideEffects=None,groups=jobset.x-k8s.io,resources=jobsets,verbs=create,versions=v1alpha2,name=mjobset.trainjob-kueue.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded

// Default takes the queue-name label off a TrainJob's JobSet, with the
// suspension and the MultiKueue managedBy Kueue's default gave it: the
// JobSet runs as Trainer made it, when its TrainJob runs.
func (j *JobSets) Default(ctx context.Context, js *jobsetapi.JobSet) error {
	if !queued(js) {
		return nil
	}
	job, err := j.lineage.ofJobSet(ctx, js)
	if job == nil || job.Runner() != trainjob.RunLocally {
		// Not proven a TrainJob's, or its TrainJob runs on a MultiKueue
		// worker and has no JobSet here: Kueue's to queue.
		return err
	}
	// A JobSet made suspended is so because its job was (Trainer makes it
	// so) or Kueue's default suspended it: it runs when its job does.
	// Trainer gives it its job's suspend again at its next reconcile, so a
	// cache a moment behind the job's start costs no more than that.
	runs := ptr.Deref(js.Spec.Suspend, false) && !job.Suspended()
	js.Spec.Suspend = unqueue(js.Labels, js.Spec.Suspend, runs)
	js.Spec.ManagedBy = notDispatched(js.Spec.ManagedBy)
	return nil
}
