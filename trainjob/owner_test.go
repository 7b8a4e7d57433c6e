package trainjob

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestOwnerOfNamesTheControllingTrainJobAlone(t *testing.T) {
	ref := func(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, Controller: ptr.To(controller)}
	}
	for name, tc := range map[string]struct {
		refs []metav1.OwnerReference
		want string
	}{
		"a TrainJob controls it":      {refs: []metav1.OwnerReference{ref("trainer.kubeflow.org/v1alpha1", "TrainJob", "llm", true)}, want: "llm"},
		"a TrainJob owns, no control": {refs: []metav1.OwnerReference{ref("trainer.kubeflow.org/v1alpha1", "TrainJob", "llm", false)}},
		"a Job controls it":           {refs: []metav1.OwnerReference{ref("batch/v1", "Job", "j", true)}},
		"another group's TrainJob":    {refs: []metav1.OwnerReference{ref("example.com/v1", "TrainJob", "llm", true)}},
		"nothing":                     {},
	} {
		t.Run(name, func(t *testing.T) {
			if got := OwnerOf(&metav1.ObjectMeta{OwnerReferences: tc.refs}); got != tc.want {
				t.Errorf("OwnerOf = %q, want %q", got, tc.want)
			}
		})
	}
}
