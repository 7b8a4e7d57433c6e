package webhook

import (
	"context"

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
type ClusterQueues struct{}

var _ admission.Validator[*kueue.ClusterQueue] = ClusterQueues{}

// SetupClusterQueues registers the ClusterQueue webhook.
func SetupClusterQueues(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &kueue.ClusterQueue{}).WithValidator(ClusterQueues{}).Complete()
}

// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-clusterqueue,mutating=false,failurePolicy=ignore,sideEffects=None,groups=kueue.x-k8s.io,resources=clusterqueues,verbs=create;update,versions=v1beta2,name=vclusterqueue.trainjob-kueue.dev,admissionReviewVersions=v1

func (ClusterQueues) ValidateCreate(_ context.Context, cq *kueue.ClusterQueue) (admission.Warnings, error) {
	return nil, clusterQueueAnnotations(nil, cq).ToAggregate()
}

func (ClusterQueues) ValidateUpdate(_ context.Context, old, cq *kueue.ClusterQueue) (admission.Warnings, error) {
	return nil, clusterQueueAnnotations(old, cq).ToAggregate()
}

func (ClusterQueues) ValidateDelete(context.Context, *kueue.ClusterQueue) (admission.Warnings, error) {
	return nil, nil
}

// clusterQueueAnnotations judges the values of ours that the write sets or
// changes: one already in place is not judged again, so an unrelated edit
// of a ClusterQueue is never refused for it.
func clusterQueueAnnotations(old, cq *kueue.ClusterQueue) field.ErrorList {
	var errs field.ErrorList
	annotations := field.NewPath("metadata", "annotations")
	changed := func(key string) (string, bool) {
		v, ok := cq.Annotations[key]
		if !ok || (old != nil && old.Annotations[key] == v) {
			return "", false
		}
		return v, true
	}
	if v, ok := changed(names.PreemptionCostAnnotation); ok {
		if _, err := preemptcost.Parse(v); err != nil {
			errs = append(errs, field.Invalid(annotations.Key(names.PreemptionCostAnnotation), v, err.Error()))
		}
	}
	if v, ok := changed(names.GangSchedulingAnnotation); ok {
		if err := gang.ValidMode(v); err != nil {
			errs = append(errs, field.Invalid(annotations.Key(names.GangSchedulingAnnotation), v, err.Error()))
		}
	}
	// A bad gang timeout is not refused: the PodGroups then take
	// coscheduling's own timeout, and the jobs' owners are told
	// (InvalidGangScheduling); the job still starts whole.
	return errs
}
