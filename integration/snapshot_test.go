package integration

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestDecodeSnapshot(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid"}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	runtime := trainer.TrainingRuntime{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainingRuntimeKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"},
		Spec:       trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](3)}},
	}
	// As Trainer writes it: the object as YAML, owned by the job.
	snapshotOf := func(rt any, owner types.UID) *corev1.ConfigMap {
		data, err := yaml.Marshal(rt)
		if err != nil {
			t.Fatal(err)
		}
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job-runtime-snapshot", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: "job", UID: owner, Controller: ptr.To(true),
			}}},
			Data: map[string]string{"runtime": string(data)},
		}
	}
	got, err := decodeSnapshot(snapshotOf(runtime, "job-uid"), job)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&runtime.Spec, got); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}

	cluster := runtime.DeepCopy()
	cluster.Kind = trainer.ClusterTrainingRuntimeKind
	noKey := snapshotOf(runtime, "job-uid")
	noKey.Data = map[string]string{"other": "x"}
	garbage := snapshotOf(runtime, "job-uid")
	garbage.Data["runtime"] = "spec: [unclosed"
	renamed := runtime.DeepCopy()
	renamed.Name = "mpi"
	for name, tc := range map[string]struct {
		cm   *corev1.ConfigMap
		want string
	}{
		"another job's":   {snapshotOf(runtime, "other-uid"), "is not controlled by this TrainJob"},
		"no runtime key":  {noKey, `has no "runtime" key`},
		"not a runtime":   {garbage, "does not hold a runtime"},
		"another runtime": {snapshotOf(renamed, "job-uid"), `holds runtime "mpi", but spec.runtimeRef names "torch"`},
		"another kind":    {snapshotOf(cluster, "job-uid"), "holds a ClusterTrainingRuntime, but spec.runtimeRef names a TrainingRuntime"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeSnapshot(tc.cm, job)
			var rtErr *errRuntime
			if !errors.As(err, &rtErr) || rtErr.reason != ReasonInvalidRuntime || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "delete the ConfigMap") {
				t.Fatalf("error %v, want an InvalidRuntime one containing %q and the fix", err, tc.want)
			}
		})
	}
}
