package runtimesource

import (
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

// Jobs snapshotted from one runtime version share one decoded runtime; each
// job's snapshot is still checked against the job.
func TestASnapshotIsDecodedOncePerContent(t *testing.T) {
	runtimeYAML := func(name string, nodes int32) string {
		data, err := yaml.Marshal(trainer.TrainingRuntime{
			TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainingRuntimeKind},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec:       trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To(nodes)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	snapshotFor := func(job *trainjob.TrainJob, data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job.Name + "-runtime-snapshot", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: job.Name, UID: job.UID, Controller: ptr.To(true),
			}}},
			Data: map[string]string{"runtime": data},
		}
	}
	jobOf := func(name, runtime string) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")}}
		j.Spec.RuntimeRef = trainer.RuntimeRef{Name: runtime, Kind: ptr.To(trainer.TrainingRuntimeKind)}
		return j
	}
	dec := newSnapshotDecoder(2)
	torchV1, torchV2, mpi := runtimeYAML("torch", 2), runtimeYAML("torch", 4), runtimeYAML("mpi", 1)
	a, b := jobOf("a", "torch"), jobOf("b", "torch")

	first, err := decodeSnapshot(snapshotFor(a, torchV1), a, dec)
	if err != nil {
		t.Fatal(err)
	}
	second, err := decodeSnapshot(snapshotFor(b, torchV1), b, dec)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("two jobs snapshotted from one runtime version decoded it twice")
	}
	if got, err := decodeSnapshot(snapshotFor(b, torchV2), b, dec); err != nil || ptr.Deref(got.MLPolicy.NumNodes, 0) != 4 {
		t.Errorf("another version of the runtime: numNodes %v, %v; want 4", got, err)
	}
	// Remembered content is still checked against the job that holds it.
	wrong := jobOf("c", "mpi")
	if _, err := decodeSnapshot(snapshotFor(wrong, torchV1), wrong, dec); err == nil || !strings.Contains(err.Error(), `holds runtime "torch", but spec.runtimeRef names "mpi"`) {
		t.Errorf("a job naming another runtime: %v", err)
	}
	// Past its bound the oldest is forgotten, and decoded afresh when met again.
	if _, err := decodeSnapshot(snapshotFor(wrong, mpi), wrong, dec); err != nil {
		t.Fatal(err)
	}
	again, err := decodeSnapshot(snapshotFor(a, torchV1), a, dec)
	if err != nil {
		t.Fatal(err)
	}
	if again == first {
		t.Error("the decoder holds more than its bound")
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("decoded afresh (-before +after):\n%s", diff)
	}
}
