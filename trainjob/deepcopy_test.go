package trainjob

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

func full() *TrainJob {
	return &TrainJob{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Spec: Spec{
			RuntimeRef: trainer.RuntimeRef{Name: "torch", Kind: ptr.To("TrainingRuntime")},
			Trainer:    &Trainer{NumNodes: ptr.To[int32](2)},
			PodSpecOverrides: []PodSpecOverride{{
				TargetJobs:      []TargetJob{{Name: "node"}},
				NodeSelector:    map[string]string{"k": "v"},
				Tolerations:     []corev1.Toleration{{Key: "t", Operator: corev1.TolerationOpExists}},
				SchedulingGates: []corev1.PodSchedulingGate{{Name: "g"}},
			}},
			PodTemplateOverrides: []PodTemplateOverride{{TargetJobs: []PodTemplateOverrideTargetJob{{Name: "node"}}}},
			RuntimePatches:       []RuntimePatch{{Manager: "m", Time: &metav1.Time{}, TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(`{"template":{}}`)}}},
			Suspend:              ptr.To(true),
			ManagedBy:            ptr.To("x"),
		},
		Status: Status{
			Conditions: []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue}},
			JobsStatus: []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}},
		},
	}
}

func TestDeepCopyIsEqualAndIndependent(t *testing.T) {
	orig := full()
	cp := orig.DeepCopy()
	if !equality.Semantic.DeepEqual(orig, cp) {
		t.Fatalf("copy differs:\n%s", cmp.Diff(orig, cp))
	}
	cp.Labels["a"] = "changed"
	cp.Spec.PodSpecOverrides[0].NodeSelector["k"] = "changed"
	cp.Spec.PodSpecOverrides[0].Tolerations[0].Key = "changed"
	cp.Spec.PodTemplateOverrides[0].TargetJobs[0].Name = "changed"
	cp.Spec.RuntimePatches[0].TrainingRuntimeSpec.Raw[0] = ' '
	*cp.Spec.Suspend = false
	cp.Status.JobsStatus[0].Active = ptr.To[int32](9)
	if !equality.Semantic.DeepEqual(orig, full()) {
		t.Errorf("changing the copy changed the original:\n%s", cmp.Diff(full(), orig))
	}
	list := &TrainJobList{Items: []TrainJob{*full()}}
	if got := list.DeepCopyObject().(*TrainJobList); !equality.Semantic.DeepEqual(got, list) {
		t.Errorf("list copy differs")
	}
}

// What a Trainer release writes decodes into our type without loss of the
// fields we model.
func TestDecodesEveryReleasesOverrideField(t *testing.T) {
	data := []byte(`{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j"},
	"spec":{"runtimeRef":{"name":"torch"},"trainer":{"numNodes":2,"numProcPerNode":4},
	"podSpecOverrides":[{"targetJobs":[{"name":"node"}],"nodeSelector":{"k":"v"},"serviceAccountName":"sa"}],
	"runtimePatches":[{"manager":"x","trainingRuntimeSpec":{"template":{"spec":{"replicatedJobs":[{"name":"node"}]}}}}]}}`)
	var tj TrainJob
	if err := json.Unmarshal(data, &tj); err != nil {
		t.Fatal(err)
	}
	if tj.Spec.PodSpecOverrides[0].NodeSelector["k"] != "v" || tj.Spec.RuntimePatches[0].Manager != "x" || *tj.Spec.Trainer.NumNodes != 2 {
		t.Errorf("decoded %+v", tj.Spec)
	}
	if tj.Spec.Trainer.NumProcPerNode.IntValue() != 4 {
		t.Errorf("Trainer v2.3 writes numProcPerNode as an integer: got %v", tj.Spec.Trainer.NumProcPerNode)
	}
}
