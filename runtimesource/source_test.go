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
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/yaml"
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
	snapshot := fixtures.RuntimeSnapshot(t, job, then)
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
	snapshot := fixtures.RuntimeSnapshot(t, job, snapped)
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
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(rt, fixtures.RuntimeSnapshot(t, job, rt)).WithInterceptorFuncs(interceptor.Funcs{
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

func TestRefOf(t *testing.T) {
	job := func(group, kind *string) *trainjob.TrainJob {
		return &trainjob.TrainJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j"},
			Spec:       trainjob.Spec{RuntimeRef: trainer.RuntimeRef{Name: "torch", APIGroup: group, Kind: kind}},
		}
	}
	cases := map[string]struct {
		job     *trainjob.TrainJob
		want    Ref
		wantErr string
	}{
		"defaults to a ClusterTrainingRuntime": {job: job(nil, nil), want: Ref{Kind: "ClusterTrainingRuntime", Name: "torch"}},
		"a TrainingRuntime lives in the job's namespace": {
			job:  job(nil, ptr.To("TrainingRuntime")),
			want: Ref{Kind: "TrainingRuntime", Namespace: "team", Name: "torch"},
		},
		"another kind":  {job: job(nil, ptr.To("Deployment")), wantErr: "only TrainingRuntime and ClusterTrainingRuntime"},
		"another group": {job: job(ptr.To("example.com"), ptr.To("TrainingRuntime")), wantErr: "example.com"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := RefOf(tc.job)
			if tc.wantErr != "" {
				var rtErr *Error
				if !errors.As(err, &rtErr) || rtErr.Reason != ReasonUnsupportedRuntime || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want an %s naming %q", err, ReasonUnsupportedRuntime, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(Ref{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// testScheme holds what the fake clients of these tests serve.
func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(trainer.AddToScheme(s))
	return s
}

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

// Gone speaks only where Trainer runs a job from its snapshot, and only of
// a runtime that is missing; a read that fails is an error, never "gone".
func TestGoneIsAMissingRuntimeOfASnapshottedJob(t *testing.T) {
	v23 := shape.RuntimePatches{Release: podsets.Rules{RuntimeSnapshot: true}}
	job := func(kind string) *trainjob.TrainJob {
		return &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "uid"},
			Spec: trainjob.Spec{RuntimeRef: trainer.RuntimeRef{Name: "torch", Kind: ptr.To(kind)}}}
	}
	live := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"}}
	readFails := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*trainer.TrainingRuntime); ok {
			return errors.New("etcd is on fire")
		}
		return c.Get(ctx, key, obj, opts...)
	}}
	cases := map[string]struct {
		shape shape.Shape
		objs  []client.Object
		funcs interceptor.Funcs
		kind  string
		want  string // in the message; "" for nothing gone
		err   string
	}{
		"v2.3, the runtime exists":                                       {shape: v23, objs: []client.Object{live}},
		"v2.3, the runtime is gone":                                      {shape: v23, want: "TrainingRuntime ns/torch named in spec.runtimeRef does not exist"},
		"v2.3, the runtime read fails":                                   {shape: v23, funcs: readFails, err: "etcd is on fire"},
		"v2.3, a kind Trainer has no runtime of: the projection says it": {shape: v23, kind: "Deployment"},
		"v2.1 reads the runtime to project":                              {shape: shape.PodTemplateOverrides{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(tc.objs...).WithInterceptorFuncs(tc.funcs).Build()
			kind := tc.kind
			if kind == "" {
				kind = trainer.TrainingRuntimeKind
			}
			got, err := New(c, c, Options{Shape: tc.shape}).Gone(t.Context(), job(kind))
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) || got != nil {
					t.Fatalf("Gone: %v, %v; want the error %q", got, err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.want == "":
				if got != nil {
					t.Errorf("Gone: %v, want nothing gone", got)
				}
			case got == nil || got.Reason != ReasonRuntimeNotFound || !strings.Contains(got.Message, tc.want):
				t.Errorf("Gone: %+v, want %s saying %q", got, ReasonRuntimeNotFound, tc.want)
			}
		})
	}
}
