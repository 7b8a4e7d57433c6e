package podsets_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// workloadCRD reads the Workload CRD of the Kueue release we build against.
func workloadCRD(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
	return fixtures.ModuleCRD(t, "", "sigs.k8s.io/kueue", fixtures.WorkloadCRDFile)
}

func TestSchemaDefaulterAppliesTheWorkloadCRDDefaults(t *testing.T) {
	d, err := podsets.NewSchemaDefaulter(workloadCRD(t), "v1beta2")
	if err != nil {
		t.Fatal(err)
	}
	ps := []kueue.PodSet{{
		Name:  "node",
		Count: 2,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "node", Image: "img",
			Ports: []corev1.ContainerPort{{ContainerPort: 29400}},
		}}}},
	}}
	if err := d.Default(ps); err != nil {
		t.Fatal(err)
	}
	if got := ps[0].Template.Spec.Containers[0].Ports[0].Protocol; got != corev1.ProtocolTCP {
		t.Errorf("port protocol %q, want TCP", got)
	}
	if ps[0].Count != 2 || ps[0].Name != "node" {
		t.Errorf("defaulting changed what it must not: %+v", ps[0])
	}
}

func TestSchemaDefaulterRejectsAnUnknownVersion(t *testing.T) {
	if _, err := podsets.NewSchemaDefaulter(workloadCRD(t), "v9"); err == nil {
		t.Fatal("want an error for a version the CRD does not serve")
	}
}

func TestMaxPodSetsIsReadFromTheWorkloadCRD(t *testing.T) {
	// Kueue v0.19 allows 18 PodSets per Workload (v0.16 allowed 8).
	if got := podsets.MaxPodSets(workloadCRD(t), "v1beta2"); got != 18 {
		t.Errorf("MaxPodSets of the linked Kueue's Workload CRD = %d, want 18", got)
	}
	if got := podsets.MaxPodSets(workloadCRD(t), "v9"); got != 0 {
		t.Errorf("MaxPodSets of a version the CRD lacks = %d, want 0", got)
	}
}
