package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

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
			c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*jobsetapi.JobSet); ok {
						reads++
					}
					return c.Get(ctx, key, obj, opts...)
				}}).Build()
			d := newDeps(c, c, nil, Options{Shape: s})
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
