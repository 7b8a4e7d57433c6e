package podsets_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// BenchmarkPodSets is the whole PodSet computation of a reconcile: a torch
// job with both initializers, trainer fields and a user override, projected
// and defaulted like the installed Workload CRD. No client: 0 API calls.
func BenchmarkPodSets(b *testing.B) {
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("16")}
	rt := runtimeOf(torch(ptr.To[int32](4)),
		rj{name: "dataset-initializer", ancestor: "dataset-initializer", container: "dataset-initializer", requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		rj{name: "model-initializer", ancestor: "model-initializer", container: "model-initializer", requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		rj{name: "node", ancestor: "trainer", requests: gpu})
	job := jobWith(func(j *trainjob.TrainJob) {
		j.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To[int32](8)}
		j.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{{
			TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
			Spec:       &trainjob.PodTemplateSpecOverride{NodeSelector: map[string]string{"pool": "a100"}},
		}}
	})
	d, err := podsets.NewSchemaDefaulter(workloadCRD(b), "v1beta2")
	if err != nil {
		b.Fatal(err)
	}
	opts := podsets.Options{Topology: discovery.KueueTopology(), Defaulter: d}
	b.ReportAllocs()
	for b.Loop() {
		roles, err := podsets.Roles(job, rt, shape.PodTemplateOverrides{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := podsets.FromRoles(roles, opts); err != nil {
			b.Fatal(err)
		}
	}
}
