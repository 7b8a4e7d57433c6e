package integration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestRuntimeIndexKeys(t *testing.T) {
	for name, tc := range map[string]struct {
		kind *string
		want []string
	}{
		"a TrainingRuntime: namespaced":       {kind: ptr.To(trainer.TrainingRuntimeKind), want: []string{"TrainingRuntime/ns/torch"}},
		"a ClusterTrainingRuntime":            {kind: ptr.To(trainer.ClusterTrainingRuntimeKind), want: []string{"ClusterTrainingRuntime//torch"}},
		"no kind: Trainer's default, cluster": {want: []string{"ClusterTrainingRuntime//torch"}},
		"another kind: not indexed":           {kind: ptr.To("Deployment")},
	} {
		t.Run(name, func(t *testing.T) {
			j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}}
			j.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: tc.kind}
			if diff := cmp.Diff(tc.want, runtimeIndexKeys(j)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
