package webhook

import (
	"context"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Jobs keeps Kueue's Job integration off the Jobs of TrainJobs' JobSets
// where Kueue's JobSet integration is off. Kueue's Job webhook leaves a
// Job alone when its owner is a kind of an enabled integration; with the
// JobSet integration off a JobSet is none, so in a namespace with a
// LocalQueue named default that webhook gives every Job of a TrainJob's
// JobSet the queue-name label and suspends it: a Workload per Job beside
// the TrainJob's, the quota booked twice, the job's pods waiting on
// admissions of their own. (With the JobSet integration on, Kueue skips
// them itself; JobSets keeps the JobSet unqueued.)
//
// Trainer names a TrainJob's JobSet after it, so a Job whose JobSet is
// named as a TrainJob of its namespace is that job's. matchConditions send
// it only Jobs a JobSet controls that Kueue's webhook queued
// (config/webhook/selectors.yaml): without a default LocalQueue no Job of
// a TrainJob waits for us, and a Job has no other thing we undo; it is
// called after Kueue's webhook, and again should Kueue's change the Job
// after it (reinvocationPolicy IfNeeded).
type Jobs struct {
	client client.Reader
	opts   integration.Options
}

var _ admission.Defaulter[*batchv1.Job] = (*Jobs)(nil)

// SetupJobs registers the Job webhook.
func SetupJobs(mgr ctrl.Manager, opts integration.Options) error {
	return ctrl.NewWebhookManagedBy(mgr, &batchv1.Job{}).WithDefaulter(&Jobs{client: mgr.GetClient(), opts: opts}).Complete()
}

// failurePolicy Fail: a TrainJob's Job let through queued books its quota
// a second time; JobSet retries a refused create.
// +kubebuilder:webhook:path=/mutate-batch-v1-job,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch,resources=jobs,verbs=create,versions=v1,name=mjob.trainjob-kueue.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded

// Default takes the queue-name label off a Job of a TrainJob's JobSet, and
// the suspension Kueue's default gave it with it when the TrainJob runs:
// the Job runs as JobSet made it, when its TrainJob runs. Standing by,
// Kueue's built-in integration needs its JobSet integration on, and skips
// such Jobs itself.
func (j *Jobs) Default(ctx context.Context, job *batchv1.Job) error {
	owner := controllerOfKind(job, jobsetapi.GroupVersion.Group, "JobSet")
	if j.opts.BuiltInTrainJob || owner == nil || !queued(job) {
		return nil
	}
	tj := &trainjob.TrainJob{}
	if err := j.client.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: owner.Name}, tj); err != nil {
		// A JobSet of its own: Kueue's Job integration queues its Jobs.
		return client.IgnoreNotFound(err)
	}
	job.Spec.Suspend = unqueue(job.Labels, job.Spec.Suspend, !tj.Suspended())
	return nil
}

// What the JobSet and Job webhooks share: a child of a TrainJob we queue
// (its JobSet, a Job of that JobSet) is never queued on its own.

// controllerOfKind is obj's controller when it is a kind of group, else
// nil.
func controllerOfKind(obj metav1.Object, group, kind string) *metav1.OwnerReference {
	owner := metav1.GetControllerOfNoCopy(obj)
	if owner == nil || owner.Kind != kind || !strings.HasPrefix(owner.APIVersion, group+"/") {
		return nil
	}
	return owner
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
