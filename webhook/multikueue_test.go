package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestAdmissionChecksOf(t *testing.T) {
	cq := &kueue.ClusterQueue{Spec: kueue.ClusterQueueSpec{AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{
		AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "prov"}, {Name: "mk"}},
	}}}
	if diff := cmp.Diff([]string{"prov", "mk"}, admissionChecksOf(cq)); diff != "" {
		t.Error(diff)
	}
	if got := admissionChecksOf(&kueue.ClusterQueue{}); len(got) != 0 {
		t.Errorf("no strategy: %v", got)
	}
}
