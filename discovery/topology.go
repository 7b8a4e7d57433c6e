package discovery

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// KueueTopology reads topology requests with the linked Kueue's own rules,
// under the feature gates this process set for Kueue: the same answer
// Kueue's webhooks give for the jobs they know.
func KueueTopology() podsets.Topology { return kueueTopology{} }

type kueueTopology struct{}

// Request reads the role's annotations. Pods of a role are indexed the way
// JobSet indexes them: the Job's completion index within a replica, the
// Job index across replicas.
func (kueueTopology) Request(r *podsets.Role) (*kueue.PodSetTopologyRequest, error) {
	// Kueue's own webhooks refuse these annotations on the jobs they know
	// (two topology levels on one template, a slice larger than the PodSet);
	// the same rules, for ours.
	path := field.NewPath("replicatedJobs").Key(r.Name).Child("template", "spec", "template", "metadata")
	errs := jobframework.ValidateTASPodSetRequest(path, &r.Template.ObjectMeta)
	errs = append(errs, jobframework.ValidateSliceSizeAnnotationUpperBound(path, &r.Template.ObjectMeta, &kueue.PodSet{Count: r.Count()})...)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return jobframework.NewPodSetTopologyRequest(&r.Template.ObjectMeta).
		PodIndexLabel(ptr.To(batchv1.JobCompletionIndexAnnotation)).
		SubGroup(ptr.To(jobset.JobIndexKey), ptr.To(r.Replicas)).
		Build()
}
