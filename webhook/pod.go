package webhook

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueconstants "sigs.k8s.io/kueue/pkg/constants"
	podconstants "sigs.k8s.io/kueue/pkg/controller/jobs/pod/constants"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Pods keeps Kueue's pod integration off the pods of TrainJobs, as Kueue's
// built-in TrainJob integration does by its mere being on. Kueue's pod
// webhook leaves a pod alone when an ancestor is a job Kueue manages (a
// kind of an enabled integration, with a queue name); a TrainJob's pod
// has none under ours (Pod → Job → JobSet → TrainJob, and the JobSet is
// never queued on its own: JobSets). In a namespace with a LocalQueue
// named default, Kueue's pod webhook would queue each such pod itself
// (the default queue, its managed label and finalizer, its admission
// gate): a Workload per pod beside the TrainJob's, the quota booked
// twice, or pods gated for ever.
//
// It undoes exactly what that webhook adds to the pod: the managed label,
// the finalizer, the role-hash annotation, the admission gate, and the
// topology gate unless the TrainJob was admitted with a topology (then
// its own admission asked for that gate). The queue-name label is left:
// without the managed label Kueue's pod integration ignores the pod.
// matchConditions send it only pods of JobSets that Kueue's pod webhook
// took (config/webhook/selectors.yaml); it is called after Kueue's
// (kueue-… sorts first) and again should Kueue's change the pod after it
// (reinvocationPolicy IfNeeded).
type Pods struct {
	client client.Reader
	opts   integration.Options
}

var _ admission.Defaulter[*corev1.Pod] = (*Pods)(nil)

// SetupPods registers the Pod webhook.
func SetupPods(mgr ctrl.Manager, opts integration.Options) error {
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).WithDefaulter(&Pods{client: mgr.GetClient(), opts: opts}).Complete()
}

// failurePolicy Fail: a TrainJob's pod let through queued books its quota
// a second time; the Job controller retries a refused create.
// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod.trainjob-kueue.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded

// Default undoes Kueue's pod queueing on a pod of a TrainJob's JobSet
// (named after the TrainJob, as Trainer names it).
func (p *Pods) Default(ctx context.Context, pod *corev1.Pod) error {
	name := pod.Labels[jobsetapi.JobSetNameKey]
	if p.opts.BuiltInTrainJob || name == "" || pod.Labels[kueueconstants.ManagedByKueueLabelKey] != kueueconstants.ManagedByKueueLabelValue {
		return nil
	}
	job := &trainjob.TrainJob{}
	if err := p.client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, job); err != nil {
		// Not a TrainJob's JobSet: Kueue's pod integration queues it.
		return client.IgnoreNotFound(err)
	}
	delete(pod.Labels, kueueconstants.ManagedByKueueLabelKey)
	delete(pod.Annotations, podconstants.RoleHashAnnotation)
	controllerutil.RemoveFinalizer(pod, podconstants.PodFinalizer)
	drop := []string{podconstants.SchedulingGateName}
	tas, err := admittedWithTopology(ctx, p.client, job)
	if err != nil {
		return err
	}
	if !tas {
		drop = append(drop, kueue.TopologySchedulingGate)
	}
	pod.Spec.SchedulingGates = slices.DeleteFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return slices.Contains(drop, g.Name) })
	if len(pod.Spec.SchedulingGates) == 0 {
		pod.Spec.SchedulingGates = nil
	}
	return nil
}

// admittedWithTopology: the job's Workload was admitted with a topology
// assignment, so its own start asked for Kueue's topology gate.
func admittedWithTopology(ctx context.Context, c client.Reader, job *trainjob.TrainJob) (bool, error) {
	wl, err := jobworkload.Of(ctx, c, job)
	if err != nil || wl == nil {
		return false, err
	}
	// Read from the admission itself: the pods of a start may be created
	// before the cache has the Workload's Admitted condition.
	return wl.Status.Admission != nil && slices.ContainsFunc(wl.Status.Admission.PodSetAssignments, func(a kueue.PodSetAssignment) bool {
		return a.TopologyAssignment != nil
	}), nil
}
