package scheme

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Every kind the manager reads or writes is known: a missing one fails
// only at run time, at its first read.
func TestTheSchemeKnowsEveryKindWeTouch(t *testing.T) {
	s := New()
	for _, gvk := range []schema.GroupVersionKind{
		trainjob.GVK,
		{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "Workload"},
		{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "ClusterQueue"},
		{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "MultiKueueCluster"},
		{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"},
		{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "Event"},
	} {
		if !s.Recognizes(gvk) {
			t.Errorf("the scheme does not know %v", gvk)
		}
	}
}
