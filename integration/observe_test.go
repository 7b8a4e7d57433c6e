package integration

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
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
			c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(runtime.DeepCopy(), reserved.DeepCopy()).
				WithInterceptorFuncs(failing(tc.fail)).Build()
			d := newDeps(c, c, nil, Options{Shape: s})
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
	c := fake.NewClientBuilder().WithScheme(NewScheme()).Build()
	s := shape.PodTemplateOverrides{}
	d := newDeps(c, c, nil, Options{Shape: s})
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
