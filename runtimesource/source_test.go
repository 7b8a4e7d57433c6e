package runtimesource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// What explain computes a job's pods from: Trainer's snapshot once taken
// (v2.3), the live runtime otherwise or for a reader who may not read
// ConfigMaps; any other failed read is an error.
func TestReadIsWhatTrainerBuildsFrom(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid"}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	live := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"},
		Spec: trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](3)}}}
	then := live.DeepCopy()
	then.Spec.MLPolicy.NumNodes = ptr.To[int32](1)
	snapshot := snapshotConfigMap(t, job, then)
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
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(tc.objs...).WithInterceptorFuncs(tc.funcs).Build()
			rt, snapshotted, err := Read(t.Context(), c, job, tc.rules)
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

// Trainer v2.3 takes a job's snapshot before its first status write: a job
// Trainer has not reported on has none to read, and is projected from its
// live runtime without asking. Once Trainer reported, the snapshot is read,
// once per spec generation.
func TestTheSnapshotIsReadOnceTrainerReported(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid", Generation: 1}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	runtimeOf := func(nodes int32) *trainer.TrainingRuntime {
		rt := &trainer.TrainingRuntime{
			TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainingRuntimeKind},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"},
			Spec:       trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To(nodes)}},
		}
		rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
		rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Labels = map[string]string{podsets.AncestorLabel: "trainer"}
		rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x"}}
		return rt
	}
	// The runtime was edited after Trainer took the snapshot.
	live, snapped := runtimeOf(3), runtimeOf(1)
	snapshot := snapshotConfigMap(t, job, snapped)
	reads := 0
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(live, snapshot).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				reads++
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	s := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	caps := s.Capabilities()
	if !caps.RuntimeSnapshot {
		t.Fatal("the v2.3 shape takes no snapshot")
	}
	d := New(c, c, Options{Shape: s})
	nodes := func(p Projection) int32 {
		for _, ps := range p.PodSets {
			if ps.Name == "node" {
				return ps.Count
			}
		}
		return -1
	}

	p, err := d.Project(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	if reads != 0 || nodes(p) != 3 {
		t.Errorf("before Trainer reported: %d snapshot reads, %d nodes; want 0 reads, the live runtime's 3", reads, nodes(p))
	}

	for range 2 {
		if p, err = d.Project(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	}
	// Admitted and started before Trainer's first reconcile: a spec edit.
	started := job.DeepCopy()
	started.Generation = 2
	if p, err = d.Project(t.Context(), started); err != nil {
		t.Fatal(err)
	}
	if reads != 0 {
		t.Errorf("reconciles before Trainer reported, a start among them: %d snapshot reads, want 0", reads)
	}

	// The runtime edited before Trainer's status write reached us: the
	// snapshot is read at once, and the edit is not booked.
	racing := live.DeepCopy()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(live), racing); err != nil {
		t.Fatal(err)
	}
	racing.Spec.MLPolicy.NumNodes = ptr.To[int32](5)
	if err := c.Update(t.Context(), racing); err != nil {
		t.Fatal(err)
	}
	if p, err = d.Project(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if reads != 1 || nodes(p) != 1 {
		t.Errorf("a runtime edit before Trainer reported: %d snapshot reads, %d nodes; want 1 read, the snapshot's 1", reads, nodes(p))
	}
	d.Forget(job.UID)
	reads = 0

	reported := job.DeepCopy()
	reported.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobSuspended, Status: metav1.ConditionTrue}}
	for range 3 {
		if p, err = d.Project(t.Context(), reported); err != nil {
			t.Fatal(err)
		}
	}
	if reads != 1 || nodes(p) != 1 {
		t.Errorf("after Trainer reported, 3 reconciles: %d snapshot reads, %d nodes; want 1 read, the snapshot's 1", reads, nodes(p))
	}
	// A spec edit (our start's, say) is projected from the snapshot read
	// before: Trainer takes no other while the job holds one.
	edited := reported.DeepCopy()
	edited.Generation = 2
	edited.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To[int32](2)}
	if p, err = d.Project(t.Context(), edited); err != nil {
		t.Fatal(err)
	}
	if reads != 1 || nodes(p) != 2 {
		t.Errorf("a spec edit: %d snapshot reads, %d nodes; want still 1 read, the edit's 2", reads, nodes(p))
	}
	// A deleted job is forgotten, its snapshot with it.
	d.Forget(job.UID)
	if _, err = d.Project(t.Context(), edited); err != nil {
		t.Fatal(err)
	}
	if reads != 2 {
		t.Errorf("after the job was forgotten: %d snapshot reads, want 2", reads)
	}
	// The decoded runtime is shared by every job snapshotted from it:
	// projecting a job leaves it as decoded.
	fresh, err := unmarshalRuntime(snapshot.Data["runtime"])
	if err != nil {
		t.Fatal(err)
	}
	for _, shared := range d.decoder.byContent {
		if diff := cmp.Diff(fresh, shared); diff != "" {
			t.Errorf("projecting changed the shared runtime (-decoded +now):\n%s", diff)
		}
	}
}

// The job framework's reconcile and the gang keeper observe a job at once,
// woken by the same status write of Trainer's: one snapshot read serves
// both.
func TestConcurrentObserversReadTheSnapshotOnce(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid", Generation: 1}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	job.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobSuspended, Status: metav1.ConditionTrue}}
	rt := &trainer.TrainingRuntime{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainingRuntimeKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"},
		Spec:       trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](2)}},
	}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Labels = map[string]string{podsets.AncestorLabel: "trainer"}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x"}}

	// The first read waits until a second one comes (or a second has had
	// ample time to come), so the two observers overlap.
	var reads atomic.Int32
	second := make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(rt, snapshotConfigMap(t, job, rt)).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				switch reads.Add(1) {
				case 1:
					select {
					case <-second:
					case <-time.After(time.Second):
					}
				case 2:
					close(second)
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	s := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	d := New(c, c, Options{Shape: s})

	var wg sync.WaitGroup
	got := make([]Projection, 2)
	errs := make([]error, 2)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = d.Project(t.Context(), job.DeepCopy()) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("two observers at once: %d snapshot reads, want 1", n)
	}
	if diff := cmp.Diff(got[0].PodSets, got[1].PodSets); diff != "" {
		t.Errorf("the observers' PodSets differ (-first +second):\n%s", diff)
	}
	if len(got[0].PodSets) == 0 {
		t.Error("no PodSets projected")
	}
}

// Before Trainer's snapshots, a job is projected from the live runtime,
// memoised per job generation and runtime version: a reconcile that finds
// both as they were computes nothing, and a runtime edit is projected
// anew.
func TestALiveRuntimeIsProjectedOncePerVersion(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "uid", Generation: 1}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "v1"}}
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(rt).Build()
	s := New(c, c, Options{Shape: shape.PodTemplateOverrides{}})
	image := func() string {
		t.Helper()
		p, err := s.Project(t.Context(), job)
		if err != nil {
			t.Fatal(err)
		}
		return p.PodSets[0].Template.Spec.Containers[0].Image
	}
	first, _ := s.memo.get(fmt.Sprintf("uid/1/TrainingRuntime ns/torch@%s", rt.ResourceVersion))
	if image() != "v1" || first.PodSets != nil {
		t.Fatalf("first projection: %s, memo before it %+v", image(), first)
	}
	if _, ok := s.memo.get(fmt.Sprintf("uid/1/TrainingRuntime ns/torch@%s", rt.ResourceVersion)); !ok {
		t.Error("the projection was not memoised under the job's generation and the runtime's version")
	}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image = "v2"
	if err := c.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	if got := image(); got != "v2" {
		t.Errorf("after the runtime's edit the job is projected with %s, want v2", got)
	}
	if _, err := s.Project(t.Context(), &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone", UID: "u2"}, Spec: trainjob.Spec{RuntimeRef: trainer.RuntimeRef{Name: "missing"}}}); !IsNotFound(err) {
		t.Errorf("a job naming no runtime: %v, want RuntimeNotFound", err)
	}
}
