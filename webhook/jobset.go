package webhook

import (
	"context"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// JobSets keeps Kueue's queueing off the JobSets Trainer creates for
// TrainJobs, as Kueue's built-in TrainJob integration does by its mere
// being on: Kueue's JobSet webhook skips a JobSet whose owner is a kind of
// an enabled Kueue integration, and TrainJob is none under ours. In a
// namespace with a LocalQueue named default (LocalQueueDefaulting) that
// webhook would give the JobSet of every TrainJob the queue-name label
// (and suspend it), and Kueue's JobSet integration a Workload of its own
// beside the TrainJob's: the job's quota booked twice. A TrainJob is
// queued as a whole, once, as its own Workload; its JobSet never is.
//
// It is called after Kueue's webhook (configurations are called in name
// order, kueue-… first), and again should Kueue's change the JobSet after
// it (reinvocationPolicy IfNeeded), so the order the API server calls
// them in does not matter. matchConditions send it only JobSets a TrainJob
// controls that Kueue's webhook queued (config/webhook/selectors.yaml): no
// other JobSet waits for us, nor a TrainJob's without a default
// LocalQueue.
type JobSets struct {
	client client.Reader
	opts   integration.Options
}

var _ admission.Defaulter[*jobsetapi.JobSet] = (*JobSets)(nil)

// SetupJobSets registers the JobSet webhook.
func SetupJobSets(mgr ctrl.Manager, opts integration.Options) error {
	return ctrl.NewWebhookManagedBy(mgr, &jobsetapi.JobSet{}).WithDefaulter(&JobSets{client: mgr.GetClient(), opts: opts}).Complete()
}

// failurePolicy Fail: a TrainJob's JobSet let through queued would book
// its quota twice; Trainer retries a refused create.
// +kubebuilder:webhook:path=/mutate-jobset-x-k8s-io-v1alpha2-jobset,mutating=true,failurePolicy=fail,sideEffects=None,groups=jobset.x-k8s.io,resources=jobsets,verbs=create,versions=v1alpha2,name=mjobset.trainjob-kueue.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded

// Default takes the queue-name label off a TrainJob's JobSet, and the
// suspension Kueue's default gave it with it: the JobSet runs as Trainer
// made it, when its TrainJob runs. Standing by, Kueue's built-in
// integration skips such JobSets itself.
func (j *JobSets) Default(ctx context.Context, js *jobsetapi.JobSet) error {
	owner := controllerOfKind(js, trainjob.GVK.Group, trainjob.GVK.Kind)
	if j.opts.BuiltInTrainJob || owner == nil || !queued(js) {
		return nil
	}
	runs := false
	if ptr.Deref(js.Spec.Suspend, false) {
		// A job not seen yet is suspended: Trainer made its JobSet
		// suspended with it.
		job := &trainjob.TrainJob{}
		err := j.client.Get(ctx, client.ObjectKey{Namespace: js.Namespace, Name: owner.Name}, job)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		runs = err == nil && job.UID == owner.UID && !job.Suspended()
	}
	js.Spec.Suspend = unqueue(js.Labels, js.Spec.Suspend, runs)
	return nil
}
