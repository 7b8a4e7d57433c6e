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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// startFixture is a suspended job of one role admitted to flavor "gpu",
// served by shape s, and a client that records every TrainJob write and
// answers them as refuse says (nil: as the API server would).
type startFixture struct {
	job     *TrainJob
	c       client.Client
	writes  *[]string
	events  *events.FakeRecorder
	infos   []podset.PodSetInfo
	deps    *deps
	refuse  func(patch []byte) error
	podSpec corev1.PodSpec
}

func newStartFixture(t *testing.T, s shape.Shape, refuse func(patch []byte) error, podSpec corev1.PodSpec) *startFixture {
	t.Helper()
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "uid", Generation: 1}}
	job.Spec.Suspend = ptr.To(true)
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch"}
	var writes []string
	rt := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "torch"}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job.DeepCopy(), rt).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			writes = append(writes, string(data))
			if refuse != nil {
				if err := refuse(data); err != nil {
					return err
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	stored := &trainjob.TrainJob{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(job), stored); err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(16)
	d := newDeps(c, c, rec, Options{Shared: settings.Shared{Shape: s, Metrics: metrics.NewMetrics()}})
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{UID: "wl"}}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "node", Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "gpu"}}}}
	ps := kueue.PodSet{Name: "node", Count: 2, Template: corev1.PodTemplateSpec{Spec: podSpec}}
	wl.Spec.PodSets = []kueue.PodSet{ps}
	obs := &observed{workload: wl, Projection: runtimesource.Projection{
		Roles:   []podsets.Role{{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 2}},
		PodSets: []kueue.PodSet{ps},
	}}
	return &startFixture{
		job: &TrainJob{TrainJob: *stored, deps: d, obs: obs}, c: c, writes: &writes, events: rec, deps: d,
		infos: []podset.PodSetInfo{{Name: "node", NodeSelector: map[string]string{"pool": "gpu"}, Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}},
	}
}

func (f *startFixture) stored(t *testing.T) *trainjob.TrainJob {
	t.Helper()
	j := &trainjob.TrainJob{}
	if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(&f.job.TrainJob), j); err != nil {
		t.Fatal(err)
	}
	return j
}

func TestStart(t *testing.T) {
	kind := schema.GroupKind{Group: trainer.GroupVersion.Group, Kind: trainer.TrainJobKind}
	v220 := func(patch []byte) error {
		// Trainer v2.2.0's webhook: no runtime patch change on a job
		// unsuspended by the same request. Its words are not what the
		// start goes by.
		if strings.Contains(string(patch), "runtimePatches") && strings.Contains(string(patch), `"/spec/suspend"`) {
			return apierrors.NewForbidden(schema.GroupResource{Group: kind.Group, Resource: "trainjobs"}, "j",
				errors.New(`admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: not now`))
		}
		return nil
	}
	tooManyPatches := func(patch []byte) error {
		if strings.Contains(string(patch), "runtimePatches") {
			return apierrors.NewInvalid(kind, "j", field.ErrorList{field.TooMany(field.NewPath("spec", "runtimePatches"), 17, 16)})
		}
		return nil
	}
	invalid := func([]byte) error {
		return apierrors.NewInvalid(kind, "j", field.ErrorList{field.TooMany(field.NewPath("spec", "runtimePatches"), 17, 16)})
	}
	unsuspendRefused := func(patch []byte) error {
		if strings.Contains(string(patch), `"/spec/suspend"`) {
			return apierrors.NewForbidden(schema.GroupResource{Group: kind.Group, Resource: "trainjobs"}, "j",
				errors.New(`ValidatingAdmissionPolicy 'p' with binding 'p' denied request: not this job`))
		}
		return nil
	}
	runtimeRefRefused := func([]byte) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: kind.Group, Resource: "trainjobs"}, "j",
			errors.New(`admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimeRef: Invalid value: {"name":"torch"}: not found`))
	}
	cases := map[string]struct {
		shape     shape.Shape
		refuse    func([]byte) error
		podSpec   corev1.PodSpec
		writes    int
		started   bool
		permanent string // the refusal's event reason
		held      string // the hold's event reason: not finished, held
		noRuntime bool   // the runtime is deleted before the start
		learned   bool   // the start falls back to two requests from now on
	}{
		"Trainer v2.1: entries, then the unsuspend": {shape: shape.PodTemplateOverrides{}, writes: 2, started: true},
		"Trainer v2.2.1: one request":               {shape: shape.RuntimePatches{UnsuspendsInOnePatch: true}, writes: 1, started: true},
		"Trainer v2.2.0: refused in one, two after": {shape: shape.RuntimePatches{UnsuspendsInOnePatch: true}, refuse: v220, writes: 3, started: true, learned: true},
		"Trainer v2.2.1, a start refused for what it contains: refused in two as well, nothing learned": {
			shape: shape.RuntimePatches{UnsuspendsInOnePatch: true}, refuse: tooManyPatches, writes: 2, permanent: ReasonStartRefused,
		},
		"a nodeSelector the admission contradicts": {
			shape: shape.PodTemplateOverrides{}, podSpec: corev1.PodSpec{NodeSelector: map[string]string{"pool": "cpu"}},
			permanent: ReasonNodeSelectorConflict,
		},
		"a write the API server refuses": {shape: shape.PodTemplateOverrides{}, refuse: invalid, writes: 1, permanent: ReasonStartRefused},
		// The entries went in; the unsuspend is refused: they are taken
		// back (a third write), as a stop would.
		"Trainer v2.1, an unsuspend an admission policy refuses: held": {shape: shape.PodTemplateOverrides{}, refuse: unsuspendRefused, writes: 3, held: ReasonStartRefusedByPolicy},
		"Trainer v2.2.1, an unsuspend an admission policy refuses: held": {
			shape: shape.RuntimePatches{UnsuspendsInOnePatch: true}, refuse: unsuspendRefused, writes: 4, held: ReasonStartRefusedByPolicy,
		},
		// Trainer's webhook checks spec.runtimeRef on every update; the
		// runtime, read again, is gone: held for it, whatever the words.
		"Trainer v2.1, the runtime deleted before the start: held for it": {shape: shape.PodTemplateOverrides{}, refuse: runtimeRefRefused, noRuntime: true, writes: 1, held: ReasonRuntimeNotFound},
		"Trainer v2.3, the runtime deleted before the start: held for it": {
			shape: shape.RuntimePatches{UnsuspendsInOnePatch: true}, refuse: runtimeRefRefused, noRuntime: true, writes: 2, held: ReasonRuntimeNotFound,
		},
		"Trainer's webhook refuses the job's content, its runtime there: finished": {shape: shape.PodTemplateOverrides{}, refuse: runtimeRefRefused, writes: 1, permanent: ReasonStartRefused},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newStartFixture(t, tc.shape, tc.refuse, tc.podSpec)
			if tc.noRuntime {
				if err := f.c.Delete(t.Context(), &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "torch"}}); err != nil {
					t.Fatal(err)
				}
			}
			before := f.job.TrainJob.DeepCopy()
			err := f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos)
			if got := len(*f.writes); got != tc.writes {
				t.Errorf("%d writes, want %d: %q", got, tc.writes, *f.writes)
			}
			if tc.permanent != "" {
				if err == nil || !podset.IsPermanent(err) {
					t.Fatalf("error %v, want a permanent one (the Workload finished, its quota released)", err)
				}
				if !strings.Contains(strings.Join(drain(f.events), "\n"), "Warning "+tc.permanent) {
					t.Errorf("no Warning %s event", tc.permanent)
				}
				if strings.Contains(err.Error(), "admission check") || strings.Contains(err.Error(), "conflict") {
					t.Errorf("the Workload's Finished message %q calls a refusal an admission check conflict", err)
				}
			} else if tc.held != "" {
				if err == nil || podset.IsPermanent(err) {
					t.Fatalf("error %v, want one that is not permanent (the job held, not finished)", err)
				}
				if !strings.Contains(strings.Join(drain(f.events), "\n"), "Warning "+tc.held) {
					t.Errorf("no Warning %s event", tc.held)
				}
				if f.job.heldFor == nil && f.job.heldByPolicy == "" {
					t.Error("refused, but nothing makes the reconcile hold the job")
				}
			} else if err != nil {
				t.Fatal(err)
			}
			stored := f.stored(t)
			if got := !ptr.Deref(stored.Spec.Suspend, true); got != tc.started {
				t.Errorf("started %v, want %v", got, tc.started)
			}
			if tc.started && !tc.shape.Injected(stored) {
				t.Errorf("started without the admission's entries: %+v", stored.Spec)
			}
			if !tc.started && tc.shape.Injected(stored) {
				t.Errorf("not started, but the admission's entries stay: %+v", stored.Spec)
			}
			if got := f.deps.twoRequestStart.Load(); got != tc.learned {
				t.Errorf("learned two requests: %v, want %v", got, tc.learned)
			}
			// The job in memory stays as read: the framework's own patch
			// afterwards changes nothing, and is not sent.
			if diff := cmp.Diff(before, &f.job.TrainJob); diff != "" {
				t.Errorf("job in memory changed (-read +now):\n%s", diff)
			}
		})
	}
}

func drain(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A job admitted while its pods can't be computed any more (its runtime
// made unusable) reports the PodSets it was admitted with, so the job
// framework reaches the start, and the start gives the quota back: it
// writes nothing and fails permanently (the Workload finishes). Failing in
// PodSets instead stops the job framework before it can release anything.
func TestAdmittedWithoutItsRuntimeGivesTheQuotaBack(t *testing.T) {
	for _, reason := range []string{ReasonInvalidRuntime} {
		t.Run(reason, func(t *testing.T) {
			f := newStartFixture(t, shape.PodTemplateOverrides{}, nil, corev1.PodSpec{})
			f.job.obs.runtimeErr = &runtimesource.Error{Reason: reason, Message: "TrainingRuntime ns/torch: " + reason}
			f.job.obs.Projection = runtimesource.Projection{}
			ps, err := f.job.PodSets(t.Context(), f.c)
			if err != nil {
				t.Fatalf("PodSets of a reserved job: %v, want the reserved ones", err)
			}
			if diff := cmp.Diff(f.job.obs.workload.Spec.PodSets, ps); diff != "" {
				t.Errorf("PodSets (-reserved +reported):\n%s", diff)
			}
			err = f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos)
			if err == nil || !podset.IsPermanent(err) || !strings.Contains(err.Error(), "quota reservation is released") {
				t.Fatalf("start: %v, want a permanent error releasing the quota", err)
			}
			if len(*f.writes) != 0 {
				t.Errorf("wrote %q to a job that can't start", *f.writes)
			}
			if !ptr.Deref(f.stored(t).Spec.Suspend, false) {
				t.Error("started")
			}
		})
	}
}

// On Trainer v2.3 a job runs from its snapshot, but Trainer's webhook
// refuses every update of a job whose runtime is gone: the observation
// (from the informer cache) finds it gone, and the start holds the job
// without sending the write that would be refused.
func TestAV23JobWhoseRuntimeIsGoneIsHeldWithoutAWrite(t *testing.T) {
	f := newStartFixture(t, shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}, nil, corev1.PodSpec{})
	gone, err := f.deps.runtimes.Gone(t.Context(), &f.job.TrainJob)
	if err != nil || gone != nil {
		t.Fatalf("runtime there: %v, %v; want nothing gone", gone, err)
	}
	if err := f.c.Delete(t.Context(), &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "torch"}}); err != nil {
		t.Fatal(err)
	}
	if f.job.obs.runtimeGone, err = f.deps.runtimes.Gone(t.Context(), &f.job.TrainJob); err != nil || f.job.obs.runtimeGone == nil {
		t.Fatalf("runtime deleted: %v, %v; want it gone", f.job.obs.runtimeGone, err)
	}
	err = f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos)
	if err == nil || podset.IsPermanent(err) {
		t.Fatalf("start: %v, want an error that is not permanent (held, not finished)", err)
	}
	if len(*f.writes) != 0 {
		t.Errorf("wrote %q: Trainer's webhook refuses it", *f.writes)
	}
	if _, err := f.job.PodSets(t.Context(), f.c); err != nil {
		t.Fatal(err)
	}
	f.job.tell()
	if got := strings.Join(drain(f.events), "\n"); !strings.Contains(got, "Warning "+ReasonRuntimeNotFound) {
		t.Errorf("events %q, want a Warning %s", got, ReasonRuntimeNotFound)
	}

	// Before v2.3 the projection itself reads the runtime: nothing else.
	v21 := runtimesource.New(f.c, f.c, runtimesource.Options{Shape: shape.PodTemplateOverrides{}})
	if gone, err := v21.Gone(t.Context(), &f.job.TrainJob); err != nil || gone != nil {
		t.Errorf("Trainer v2.1: %v, %v; want no second look", gone, err)
	}
}

// A refused start whose cause can't be told — the runtime read after the
// refusal fails — is neither finished nor held: the reconcile fails and is
// retried, so a read error never finishes a job an admin might mend.
func TestARefusalWhoseRuntimeCannotBeReadIsRetried(t *testing.T) {
	refuse := func([]byte) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: trainer.GroupVersion.Group, Resource: "trainjobs"}, "j",
			errors.New(`admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimeRef: Invalid value: not found`))
	}
	f := newStartFixture(t, shape.PodTemplateOverrides{}, refuse, corev1.PodSpec{})
	f.deps.apiReader = interceptor.NewClient(f.c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*trainer.ClusterTrainingRuntime); ok {
				return errors.New("connection refused")
			}
			return c.Get(ctx, key, obj, opts...)
		}})
	err := f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos)
	if err == nil || podset.IsPermanent(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("start: %v, want the read's error, not permanent", err)
	}
	if f.job.heldFor != nil || f.job.heldByPolicy != "" {
		t.Error("held on a guess")
	}
}
