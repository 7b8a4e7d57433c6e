package webhook

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueconstants "sigs.k8s.io/kueue/pkg/constants"
	podconstants "sigs.k8s.io/kueue/pkg/controller/jobs/pod/constants"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
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
// Only a pod whose controller is a Job of a JobSet of a TrainJob, each hop
// by name and UID (lineage), is given back; a pod that only says so in its
// labels, or claims an owner whose UID is another's, stays Kueue's. As the
// other children webhooks, it acts on what the pod is, not on this
// replica's mode: a job the active replica started has its pods let
// through by a replica still standing by.
//
// It undoes exactly what Kueue's webhook adds to the pod: the managed
// label, the finalizer, the role-hash annotation, and the admission and
// topology gates the pod's Job template does not carry. The template is
// the truth of what the pod was made with: our start puts the topology
// gate there (through the TrainJob's overrides) when the admission placed
// the job by topology, and a cache that lags the admission cannot say
// otherwise. The queue-name label is left: without the managed label
// Kueue's pod integration ignores the pod. matchConditions send it every
// pod of a Job of a JobSet, and every pod naming a PodGroup
// (config/webhook/selectors.yaml), by what their makers set alone: it is
// called in the first round whichever configuration sorts first, and
// again should Kueue's change the pod after it (reinvocationPolicy
// IfNeeded).
type Pods struct {
	lineage lineage
}

var _ admission.Defaulter[*corev1.Pod] = (*Pods)(nil)

// provenJobsKept bounds the Jobs the pod webhook remembers proven.
const provenJobsKept = 4096

// SetupPods registers the Pod webhook.
func SetupPods(mgr ctrl.Manager) error {
	l := lineageOf(mgr)
	l.jobs = newProvenJobs(provenJobsKept)
	l.groups = informerGroups{cache: mgr.GetCache()}
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).WithDefaulter(&Pods{lineage: l}).Complete()
}

// failurePolicy Fail: a TrainJob's pod let through queued books its quota
// a second time; the Job controller retries a refused create.
// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod.trainjob-kueue.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded

// Default undoes Kueue's pod queueing on a pod of a TrainJob, puts a pod
// of a workload-api gang in its wave's PodGroup, and refuses a pod that
// names a PodGroup of a TrainJob it is not proven a pod of.
func (p *Pods) Default(ctx context.Context, pod *corev1.Pod) error {
	queued := pod.Labels[kueueconstants.ManagedByKueueLabelKey] == kueueconstants.ManagedByKueueLabelValue
	group, inGang := pod.Labels[names.PodGroupLabel]
	named := namedGroup(pod)
	if !queued && !inGang && named == "" {
		return nil
	}
	tj, job, err := p.lineage.ofPod(ctx, pod)
	if err != nil {
		return err
	}
	if tj != nil && tj.Runner() != trainjob.RunLocally {
		// Its TrainJob runs on a MultiKueue worker: no pod of it runs here.
		tj, job = nil, nil
	}
	if named != "" {
		// Set by the pod's maker (its template, or by hand): a member only
		// if proven one (members.go).
		if err := p.mayName(ctx, pod, named, tj, job); err != nil {
			return err
		}
	}
	if tj == nil {
		// Not proven a TrainJob's: Kueue's pod integration queues it, and
		// it joins no group of ours.
		return nil
	}
	if queued {
		unqueuePod(pod, job)
	}
	if inGang && named == "" {
		return p.joinGroup(ctx, pod, tj, job, group)
	}
	return nil
}

// unqueuePod takes off pod what Kueue's pod webhook added to queue it.
func unqueuePod(pod *corev1.Pod, job *batchv1.Job) {
	delete(pod.Labels, kueueconstants.ManagedByKueueLabelKey)
	delete(pod.Annotations, podconstants.RoleHashAnnotation)
	controllerutil.RemoveFinalizer(pod, podconstants.PodFinalizer)
	made := job.Spec.Template.Spec.SchedulingGates
	pod.Spec.SchedulingGates = slices.DeleteFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool {
		return (g.Name == podconstants.SchedulingGateName || g.Name == kueue.TopologySchedulingGate) &&
			!slices.ContainsFunc(made, func(m corev1.PodSchedulingGate) bool { return m.Name == g.Name })
	})
	if len(pod.Spec.SchedulingGates) == 0 {
		pod.Spec.SchedulingGates = nil
	}
}

// joinGroup puts a pod of TrainJob tj in the Kubernetes PodGroup its label
// names (spec.schedulingGroup, immutable: only at create), once the group
// is proven one we made for tj's wave of the pod's role (its Job's, as
// JobSet labelled it). A pod of a gang
// that can't join its group is refused: scheduled alone it could start
// while the rest of its gang can't (the Job controller retries the
// create). The cache may prove the group (groups.go); else it is read
// from the API server: our start made it a moment ago, maybe on another
// replica, and a cache that lags must not refuse the pod.
func (p *Pods) joinGroup(ctx context.Context, pod *corev1.Pod, tj *trainjob.TrainJob, job *batchv1.Job, group string) error {
	role := job.Labels[jobsetapi.ReplicatedJobNameKey]
	if !p.lineage.cachedMember(ctx, pod.Namespace, group, tj.UID, role) {
		pg := newWorkloadAPIGroup()
		if err := p.lineage.live.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: group}, pg); err != nil {
			return fmt.Errorf("label %s: reading PodGroup %s (scheduling.k8s.io/v1beta1) of TrainJob %s: %w", names.PodGroupLabel, group, tj.Name, err)
		}
		if err := gang.WorkloadAPIGroupFor(pg, tj.UID, role); err != nil {
			return fmt.Errorf("label %s: %w; the pod is not created outside its gang", names.PodGroupLabel, err)
		}
	}
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
	return nil
}
