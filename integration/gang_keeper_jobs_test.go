package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The gang keeper is told of the jobs that run here on Kueue's admission
// as admitted, and of no other.
func TestTheGangKeeperSeesOnlyJobsRunningAsAdmitted(t *testing.T) {
	const ns = "ns"
	running := queuedJob(ns)
	running.Spec.Suspend = ptr.To(false)
	rt := torchRuntime(ns, corev1.ResourceRequirements{})
	s := shape.PodTemplateOverrides{}
	c0 := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rt).Build()
	projected, err := newDeps(c0, c0, nil, Options{Shared: settings.Shared{Shape: s}}).runtimes.Project(t.Context(), running)
	if err != nil {
		t.Fatal(err)
	}
	admitted := ownedWorkload(running, true)
	admitted.Spec.PodSets = projected.PodSets
	admitted.Status.Conditions = append(admitted.Status.Conditions, metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue})

	for name, tc := range map[string]struct {
		job     func(*trainjob.TrainJob)
		wl      func(*kueue.Workload)
		running bool
	}{
		"running as admitted":  {running: true},
		"suspended":            {job: func(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(true) }},
		"another controller's": {job: func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To("example.com/mine") }},
		"finished": {job: func(j *trainjob.TrainJob) {
			j.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
		}},
		"no reservation": {wl: func(wl *kueue.Workload) { wl.Status.Conditions, wl.Status.Admission = nil, nil }},
		"admitted with other pods (a runtime edited since)": {wl: func(wl *kueue.Workload) { wl.Spec.PodSets[0].Count = 7 }},
	} {
		t.Run(name, func(t *testing.T) {
			j, wl := running.DeepCopy(), admitted.DeepCopy()
			if tc.job != nil {
				tc.job(j)
			}
			if tc.wl != nil {
				tc.wl(wl)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rt.DeepCopy(), j, wl).Build()
			got, err := (runningJobs{newDeps(c, c, nil, Options{Shared: settings.Shared{Shape: s}})}).Running(t.Context(), client.ObjectKeyFromObject(j))
			if err != nil {
				t.Fatal(err)
			}
			if (got != nil) != tc.running {
				t.Fatalf("running: %+v, want %v", got, tc.running)
			}
			if got != nil && (len(got.Roles) != 1 || got.Roles[0].Name != "node" || got.TrainerGang) {
				t.Errorf("roles %+v, trainer gang %v; want node, none", got.Roles, got.TrainerGang)
			}
		})
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	if got, err := (runningJobs{newDeps(c, c, nil, Options{Shared: settings.Shared{Shape: s}})}).Running(t.Context(), types.NamespacedName{Namespace: ns, Name: "gone"}); got != nil || err != nil {
		t.Errorf("a job that is gone: %+v, %v", got, err)
	}
}
