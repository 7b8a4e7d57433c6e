package webhook

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// ClusterQueues refuses, when a batch admin writes them, the annotations
// of ours on a ClusterQueue we could not use: a preemption-cost policy
// or a gang scheduling mode. It is registered with failurePolicy Ignore and sees
// only writes that change a ClusterQueue's annotations (matchConditions):
// a ClusterQueue is Kueue's, and its edits must never wait for our
// manager. A value that got through while the manager was down is still
// said, as a Warning on the ClusterQueue.
//
// A gang mode is refused on a cluster that does not serve its PodGroups
// (workload-api without the Workload API, coscheduling without
// scheduler-plugins' CRD): no job the ClusterQueue admitted could start.
type ClusterQueues struct {
	// Gangs: the gang schedulers' PodGroups the cluster serves.
	Gangs gang.Schedulers
}

var _ admission.Validator[*kueue.ClusterQueue] = ClusterQueues{}

// SetupClusterQueues registers the ClusterQueue webhook.
func SetupClusterQueues(mgr ctrl.Manager, gangs gang.Schedulers) error {
	return ctrl.NewWebhookManagedBy(mgr, &kueue.ClusterQueue{}).WithValidator(ClusterQueues{Gangs: gangs}).Complete()
}

// failurePolicy Ignore: it only refuses our annotations with values we
// could not use, and a ClusterQueue edit (Kueue's own object) must never
// wait for our manager; a policy that got through is said afterwards.
// config/webhook/selectors.yaml lets only writes that change annotations
// reach it (matchConditions).
// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-clusterqueue,mutating=false,failurePolicy=ignore,sideEffects=None,groups=kueue.x-k8s.io,resources=clusterqueues,verbs=create;update,versions=v1beta2,name=vclusterqueue.trainjob-kueue.dev,admissionReviewVersions=v1,timeoutSeconds=5

func (v ClusterQueues) ValidateCreate(_ context.Context, cq *kueue.ClusterQueue) (admission.Warnings, error) {
	return nil, v.annotations(nil, cq).ToAggregate()
}

func (v ClusterQueues) ValidateUpdate(_ context.Context, old, cq *kueue.ClusterQueue) (admission.Warnings, error) {
	return nil, v.annotations(old, cq).ToAggregate()
}

func (ClusterQueues) ValidateDelete(context.Context, *kueue.ClusterQueue) (admission.Warnings, error) {
	return nil, nil
}

// clusterQueueAnnotations judges the values of ours that the write sets or
// changes: one already in place is not judged again, so an unrelated edit
// of a ClusterQueue is never refused for it.
func (v ClusterQueues) annotations(old, cq *kueue.ClusterQueue) field.ErrorList {
	var was map[string]string
	if old != nil {
		was = old.Annotations
	}
	return judgeAnnotations(was, cq.Annotations, map[string]func(string) error{
		names.PreemptionCostAnnotation: func(v string) error {
			_, err := preemptcost.Parse(v)
			return err
		},
		// A bad gang timeout is not refused: the PodGroups then take
		// coscheduling's own timeout, and the jobs' owners are told
		// (InvalidGangScheduling); the job still starts whole.
		names.GangSchedulingAnnotation: func(mode string) error {
			if err := gang.ValidMode(mode); err != nil {
				return err
			}
			return v.Gangs.Available(mode)
		},
	})
}

// judgeAnnotations checks each annotation of checks that now sets or
// changes (was is nil at create), naming the annotation in the refusal.
func judgeAnnotations(was, now map[string]string, checks map[string]func(string) error) field.ErrorList {
	var errs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(checks)) {
		v, ok := now[key]
		if !ok || (was != nil && was[key] == v) {
			continue
		}
		if err := checks[key](v); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(key), v, err.Error()))
		}
	}
	return errs
}
