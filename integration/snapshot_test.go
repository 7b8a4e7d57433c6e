package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
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

// What explain computes a job's pods from: Trainer's snapshot once taken
// (v2.3), the live runtime otherwise or for a reader who may not read
// ConfigMaps; any other failed read is an error.
func TestJobRuntimeSpecIsWhatTrainerBuildsFrom(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid"}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	live := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"},
		Spec: trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](3)}}}
	then := live.DeepCopy()
	then.Spec.MLPolicy.NumNodes = ptr.To[int32](1)
	data, err := yaml.Marshal(then)
	if err != nil {
		t.Fatal(err)
	}
	snapshot := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job-runtime-snapshot", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: "job", UID: "job-uid", Controller: ptr.To(true),
		}}},
		Data: map[string]string{"runtime": string(data)},
	}
	v23 := podsets.Rules{RuntimeSnapshot: true}
	configMapsFail := func(err error) interceptor.Funcs {
		return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		}}
	}
	forbidden := apierrors.NewForbidden(corev1.Resource("configmaps"), "job-runtime-snapshot", errors.New("no"))
	for name, tc := range map[string]struct {
		rules       podsets.Rules
		objs        []client.Object
		funcs       interceptor.Funcs
		wantNodes   int32
		snapshotted bool
		err         string
	}{
		"v2.3, snapshot taken":          {rules: v23, objs: []client.Object{live, snapshot}, wantNodes: 1, snapshotted: true},
		"v2.3, not yet":                 {rules: v23, objs: []client.Object{live}, wantNodes: 3},
		"v2.1: the live runtime":        {objs: []client.Object{live, snapshot}, wantNodes: 3},
		"v2.3, ConfigMaps forbidden":    {rules: v23, objs: []client.Object{live, snapshot}, funcs: configMapsFail(forbidden), wantNodes: 3},
		"v2.3, the snapshot read fails": {rules: v23, objs: []client.Object{live, snapshot}, funcs: configMapsFail(errors.New("etcd is on fire")), err: "reading the runtime snapshot"},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(tc.objs...).WithInterceptorFuncs(tc.funcs).Build()
			rt, snapshotted, err := JobRuntimeSpec(t.Context(), c, job, tc.rules)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ptr.Deref(rt.MLPolicy.NumNodes, 0); got != tc.wantNodes || snapshotted != tc.snapshotted {
				t.Errorf("numNodes %d, snapshotted %v; want %d, %v", got, snapshotted, tc.wantNodes, tc.snapshotted)
			}
		})
	}
}
