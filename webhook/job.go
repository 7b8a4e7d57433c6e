package webhook

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Jobs keeps Kueue's Job integration off the Jobs of TrainJobs' JobSets
// where Kueue's JobSet integration is off. Kueue's Job webhook leaves a
// Job alone when its owner is a kind of an enabled integration; with the
// JobSet integration off a JobSet is none, so in a namespace with a
// LocalQueue named default that webhook gives every Job of a TrainJob's
// JobSet the queue-name label and suspends it (and hands it to MultiKueue
// when that queue dispatches): a Workload per Job beside the TrainJob's,
// the quota booked twice, the job's pods waiting on admissions of their
// own. (With the JobSet integration on, Kueue skips them itself; JobSets
// keeps the JobSet unqueued.)
//
// Only a Job whose controller is a JobSet whose controller is a TrainJob,
// each by name and UID (lineage), is given back; any other keeps Kueue's
// queueing. As JobSets, it acts on what the Job is, not on this replica's
// mode. matchConditions send it only Jobs a JobSet controls that Kueue's
// webhook queued (config/webhook/selectors.yaml): without a default
// LocalQueue no Job of a TrainJob waits for us, and a Job has no other
// thing we undo; it is called after Kueue's webhook, and again should
// Kueue's change the Job after it (reinvocationPolicy IfNeeded).
type Jobs struct {
	lineage lineage
}

var _ admission.Defaulter[*batchv1.Job] = (*Jobs)(nil)

// SetupJobs registers the Job webhook.
func SetupJobs(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &batchv1.Job{}).WithDefaulter(&Jobs{lineage: lineageOf(mgr)}).Complete()
}

// failurePolicy Fail: a TrainJob's Job let through queued books its quota
// a second time; JobSet retries a refused create.
// +kubebuilder:webhook:path=/mutate-batch-v1-job,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch,resources=jobs,verbs=create,versions=v1,name=mjob.trainjob-kueue.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded

// Default takes the queue-name label off a Job of a TrainJob's JobSet,
// with the MultiKueue managedBy and, when the TrainJob runs, the
// suspension Kueue's default gave it: the Job runs as JobSet made it, when
// its TrainJob runs.
func (j *Jobs) Default(ctx context.Context, job *batchv1.Job) error {
	if !queued(job) {
		return nil
	}
	tj, err := j.lineage.ofJob(ctx, job)
	if tj == nil || tj.Runner() != trainjob.RunLocally {
		// Not proven a TrainJob's (a JobSet of its own, a forged owner):
		// Kueue's Job integration queues it.
		return err
	}
	job.Spec.Suspend = unqueue(job.Labels, job.Spec.Suspend, !tj.Suspended())
	job.Spec.ManagedBy = notDispatched(job.Spec.ManagedBy)
	return nil
}

// What the JobSet and Job webhooks share: a child of a TrainJob we queue
// (its JobSet, a Job of that JobSet) is never queued on its own.

// lineageOf reads owners through mgr: TrainJobs from its cache, the rest
// from the API server.
func lineageOf(mgr ctrl.Manager) lineage {
	return lineage{cached: mgr.GetClient(), live: mgr.GetAPIReader()}
}

// queued: Kueue's webhook gave obj a queue (a default LocalQueue).
func queued(obj metav1.Object) bool {
	_, ok := obj.GetLabels()[constants.QueueLabel]
	return ok
}

// unqueue takes the queue-name label Kueue's default gave a TrainJob's
// child off labels, and returns its spec.suspend: Kueue suspended it with
// the label, so it runs again when its TrainJob runs (jobRuns), as Trainer
// or JobSet made it.
func unqueue(labels map[string]string, suspend *bool, jobRuns bool) *bool {
	delete(labels, constants.QueueLabel)
	if ptr.Deref(suspend, false) && jobRuns {
		return ptr.To(false)
	}
	return suspend
}

// notDispatched is a TrainJob's child's spec.managedBy as its controller
// made it: Kueue's default hands a queued Job or JobSet to MultiKueue
// when the default LocalQueue leads to a MultiKueue ClusterQueue, and only
// when it had none or its own controller's (CanDefaultManagedBy), which
// Trainer and JobSet never set; the field is immutable, so left it would
// keep the child from running here for good while its TrainJob holds the
// quota.
func notDispatched(managedBy *string) *string {
	if ptr.Deref(managedBy, "") == kueue.MultiKueueControllerName {
		return nil
	}
	return managedBy
}
