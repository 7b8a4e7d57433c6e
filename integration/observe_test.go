package integration

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A read that fails is an error of the reconcile, never "nothing there":
// each case below used to be answered with an empty result (no Workload,
// no Jobs running, no MultiKueue check, no gang setting, no roles), on
// which the job framework or the gang keeper would then have acted.
func TestObserveFailsOnAFailedRead(t *testing.T) {
	const ns = "ns"
	job := queuedJob(ns)
	runtime := torchRuntime(ns, corev1.ResourceRequirements{})
	reserved := ownedWorkload(job, true)
	reserved.Status.AdmissionChecks = []kueue.AdmissionCheckState{{Name: "mk"}}

	failing := func(kind any) interceptor.Funcs {
		return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if sameType(obj, kind) {
				return errors.New("etcd is on fire")
			}
			return c.Get(ctx, key, obj, opts...)
		}}
	}
	cases := map[string]struct {
		fail      any
		shape     shape.Shape
		managedBy *string
		want      string
	}{
		"the Workload":                          {fail: &kueue.Workload{}, want: "reading Workload"},
		"the runtime":                           {fail: &trainer.TrainingRuntime{}, want: "reading TrainingRuntime ns/torch"},
		"the JobSet of a Trainer v2.0 job":      {fail: &jobsetapi.JobSet{}, shape: shape.PodSpecOverrides{}, want: "reading the JobSet"},
		"the JobSet of a job about to start":    {fail: &jobsetapi.JobSet{}, want: "reading the JobSet"},
		"the ClusterQueue that admitted it":     {fail: &kueue.ClusterQueue{}, want: "reading ClusterQueue cq"},
		"an AdmissionCheck of a dispatched job": {fail: &kueue.AdmissionCheck{}, managedBy: ptr.To(kueue.MultiKueueControllerName), want: "reading AdmissionCheck mk"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.shape
			if s == nil {
				s = shape.PodTemplateOverrides{}
			}
			j := job.DeepCopy()
			j.Spec.ManagedBy = tc.managedBy
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(runtime.DeepCopy(), reserved.DeepCopy()).
				WithInterceptorFuncs(failing(tc.fail)).Build()
			d := newDeps(c, c, nil, Options{Shared: settings.Shared{Shape: s}})
			adapter := &TrainJob{TrainJob: *j, deps: d}
			if !adapter.Skip(t.Context()) {
				t.Fatal("Skip = false: the reconcile goes on without what it failed to read")
			}
			if adapter.readErr == nil || !strings.Contains(adapter.readErr.Error(), tc.want) {
				t.Errorf("read error %v, want one saying %q", adapter.readErr, tc.want)
			}
			if tc.managedBy == nil {
				// The gang keeper observes the same way.
				if _, err := (runningJobs{d}).Running(t.Context(), types.NamespacedName{Namespace: ns, Name: "missing"}); err != nil {
					t.Errorf("a job that is gone: %v", err)
				}
			}
		})
	}

	// Reads that succeed, with nothing there, are no error.
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	s := shape.PodTemplateOverrides{}
	d := newDeps(c, c, nil, Options{Shared: settings.Shared{Shape: s}})
	adapter := &TrainJob{TrainJob: *job.DeepCopy(), deps: d}
	if adapter.Skip(t.Context()) {
		t.Fatalf("skipped: %v", adapter.readErr)
	}
	if adapter.obs.runtimeErr == nil || adapter.obs.runtimeErr.Reason != ReasonRuntimeNotFound {
		t.Errorf("runtime: %v, want %s", adapter.obs.runtimeErr, ReasonRuntimeNotFound)
	}
	if _, err := adapter.PodSets(t.Context(), nil); err == nil || len(adapter.notes) != 1 || adapter.notes[0].reason != ReasonRuntimeNotFound {
		t.Errorf("PodSets: %v, notes %v; want the runtime's error, said once", err, adapter.notes)
	}
}

func sameType(a, b any) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }

// Before Trainer v2.3, a job whose runtime was edited (in what its pods ask
// for) after Trainer built its JobSet can't start: it is not started, and
// is held (JobSetOutOfDate), while the JobSet is read only for a job about
// to start or held.
func TestAJobItsJobSetCantTakeIsNotStarted(t *testing.T) {
	const ns = "ns"
	job := queuedJob(ns)
	cpu := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
	}
	runtime := torchRuntime(ns, cpu("3"))
	jobSet := func(q string) *jobsetapi.JobSet {
		js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name}}
		js.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
		js.Spec.ReplicatedJobs[0].Template.Spec.Parallelism = ptr.To[int32](1)
		js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x", Resources: cpu(q)}}
		return js
	}
	wl := func(reserved, held bool) *kueue.Workload {
		w := ownedWorkload(job, reserved)
		if held {
			w.Annotations = map[string]string{names.HeldForRuntimeAnnotation: "TrainingRuntime ns/torch"}
			w.Spec.Active = ptr.To(false)
		}
		return w
	}
	v23 := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	cases := map[string]struct {
		shape       shape.Shape
		workload    *kueue.Workload
		jobSet      *jobsetapi.JobSet
		want        string // in the outgrown message; "" for none
		jobSetReads int
	}{
		"reserved, JobSet built for cpu 1, runtime now 3": {workload: wl(true, false), jobSet: jobSet("1"), jobSetReads: 1,
			want: `container "node" asks for requests cpu=1 in the JobSet, requests cpu=3 now`},
		"reserved, JobSet agrees":                   {workload: wl(true, false), jobSet: jobSet("3"), jobSetReads: 1},
		"reserved, no JobSet yet":                   {workload: wl(true, false), jobSetReads: 1},
		"held, still out of date":                   {workload: wl(false, true), jobSet: jobSet("1"), jobSetReads: 1, want: "restore TrainingRuntime ns/torch"},
		"queued, nothing reserved: JobSet not read": {workload: wl(false, false), jobSet: jobSet("1")},
		"Trainer v2.3 builds from its snapshot":     {shape: v23, workload: wl(true, false), jobSet: jobSet("1")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.shape
			if s == nil {
				s = shape.PodTemplateOverrides{}
			}
			objs := []client.Object{runtime.DeepCopy(), tc.workload}
			if tc.jobSet != nil {
				objs = append(objs, tc.jobSet)
			}
			reads := 0
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*jobsetapi.JobSet); ok {
						reads++
					}
					return c.Get(ctx, key, obj, opts...)
				}}).Build()
			d := newDeps(c, c, nil, Options{Shared: settings.Shared{Shape: s}})
			adapter := &TrainJob{TrainJob: *job.DeepCopy(), deps: d}
			if adapter.Skip(t.Context()) {
				t.Fatalf("skipped: %v", adapter.readErr)
			}
			if reads != tc.jobSetReads {
				t.Errorf("%d reads of the JobSet, want %d", reads, tc.jobSetReads)
			}
			got := adapter.obs.outgrown
			if tc.want == "" {
				if got != nil {
					t.Errorf("outgrown: %v, want none", got)
				}
				return
			}
			if got == nil || got.Reason != ReasonJobSetOutOfDate || !strings.Contains(got.Message, tc.want) {
				t.Fatalf("outgrown: %v, want %s saying %q", got, ReasonJobSetOutOfDate, tc.want)
			}
			if tc.workload.Status.Admission == nil {
				return
			}
			// Admitted as it is, the job is not started: the error is not
			// permanent (the Workload is held, not finished).
			infos := []podset.PodSetInfo{{Name: "node"}}
			_, _, err := adapter.startPlan(t.Context(), infos)
			var rt *runtimesource.Error
			if !errors.As(err, &rt) || rt.Reason != ReasonJobSetOutOfDate {
				t.Errorf("startPlan: %v, want the %s error", err, ReasonJobSetOutOfDate)
			}
		})
	}
}

// On Trainer v2.3 a job runs from its snapshot while its runtime may be
// gone; that matters only to a start we would make: a suspended job of
// ours with a Workload. Then, and only then, the observation says so.
func TestAGoneRuntimeIsObservedOnlyBeforeAStartHere(t *testing.T) {
	const ns = "ns"
	v23 := shape.RuntimePatches{Release: podsets.Rules{RuntimeSnapshot: true}}
	cases := map[string]struct {
		job      func(*trainjob.TrainJob)
		workload bool
		gone     bool
	}{
		"suspended, queued":                  {workload: true, gone: true},
		"running: nothing to start":          {job: func(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(false) }, workload: true},
		"no Workload yet: nothing to start":  {},
		"dispatched by MultiKueue elsewhere": {job: func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName) }, workload: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := queuedJob(ns)
			job.Status.Conditions = []metav1.Condition{{Type: "Created", Status: metav1.ConditionTrue}}
			if tc.job != nil {
				tc.job(job)
			}
			snapshot := fixtures.RuntimeSnapshot(t, job, torchRuntime(ns, corev1.ResourceRequirements{}))
			objs := []client.Object{snapshot}
			if tc.workload {
				objs = append(objs, ownedWorkload(job, false))
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
			adapter := &TrainJob{TrainJob: *job, deps: newDeps(c, c, nil, Options{Shared: settings.Shared{Shape: v23}})}
			if adapter.Skip(t.Context()) {
				t.Fatalf("skipped: %v", adapter.readErr)
			}
			if adapter.obs.runtimeErr != nil || len(adapter.obs.PodSets) != 1 {
				t.Fatalf("projection from the snapshot: %v, %d PodSets; want one", adapter.obs.runtimeErr, len(adapter.obs.PodSets))
			}
			switch got := adapter.obs.runtimeGone; {
			case tc.gone && (got == nil || got.Reason != ReasonRuntimeNotFound):
				t.Errorf("runtimeGone %v, want %s", got, ReasonRuntimeNotFound)
			case !tc.gone && got != nil:
				t.Errorf("runtimeGone %v, want nothing said", got)
			}
		})
	}
}
