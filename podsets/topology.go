package podsets

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
)

// topologyRequest reads the Kueue topology annotations of the role's pod
// template. Pods of a role are indexed the way JobSet indexes them: the Job's
// completion index within a replica, the Job index across replicas.
func topologyRequest(r *Role) (*kueue.PodSetTopologyRequest, error) {
	return jobframework.NewPodSetTopologyRequest(&r.Template.ObjectMeta).
		PodIndexLabel(ptr.To(batchv1.JobCompletionIndexAnnotation)).
		SubGroup(ptr.To(jobset.JobIndexKey), ptr.To(r.Replicas)).
		Build()
}
