package runtimesource

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
	got, err := decodeSnapshot(snapshotOf(runtime, "job-uid"), job, nil)
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
			_, err := decodeSnapshot(tc.cm, job, newSnapshotDecoder(snapshotsRemembered))
			var rtErr *Error
			if !errors.As(err, &rtErr) || rtErr.Reason != ReasonInvalidRuntime || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "delete the ConfigMap") {
				t.Fatalf("error %v, want an InvalidRuntime one containing %q and the fix", err, tc.want)
			}
		})
	}
}

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

// snapshotConfigMap is job's snapshot of rt as Trainer v2.3 writes it: the
// runtime as YAML, controlled by the job.
func snapshotConfigMap(t *testing.T, job *trainjob.TrainJob, rt any) *corev1.ConfigMap {
	t.Helper()
	data, err := yaml.Marshal(rt)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + "-runtime-snapshot", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: job.Name, UID: job.UID, Controller: ptr.To(true),
		}}},
		Data: map[string]string{"runtime": string(data)},
	}
}
