package integration

import (
	"testing"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Jobs another controller owns are skipped, Trainer's and MultiKueue's
// are not.
func TestSkipLeavesJobsOfAnotherController(t *testing.T) {
	for name, tc := range map[string]struct {
		managedBy *string
		skip      bool
	}{
		"unset: Trainer's":   {nil, false},
		"MultiKueue":         {ptr.To(kueue.MultiKueueControllerName), false},
		"another controller": {ptr.To("example.com/my-operator"), true},
	} {
		t.Run(name, func(t *testing.T) {
			job := &TrainJob{TrainJob: trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: trainjob.Spec{ManagedBy: tc.managedBy, Suspend: ptr.To(true)}}}
			if got := job.Skip(t.Context()); got != tc.skip {
				t.Errorf("Skip = %v, want %v", got, tc.skip)
			}
		})
	}
}

// The job framework's questions about a job running here are answered from
// its observation: active while a child Job has active pods; its priority
// class is the trainer step's.
func TestALocalJobAnswersFromItsObservation(t *testing.T) {
	roles := []podsets.Role{
		{Name: "init", Ancestor: podsets.AncestorDatasetInitializer, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{PriorityClassName: "low"}}},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{PriorityClassName: "high"}}},
	}
	for name, tc := range map[string]struct {
		obs           observed
		active        bool
		priorityClass string
	}{
		"no Jobs yet": {obs: observed{Projection: runtimesource.Projection{Roles: roles}}, priorityClass: "high"},
		"a Job with active pods": {obs: observed{Projection: runtimesource.Projection{Roles: roles},
			jobs: []trainer.JobStatus{{Name: "init", Active: ptr.To[int32](0)}, {Name: "node", Active: ptr.To[int32](2)}}}, active: true, priorityClass: "high"},
		"Jobs drained": {obs: observed{Projection: runtimesource.Projection{Roles: roles},
			jobs: []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](0)}}}, priorityClass: "high"},
		"pods that can't be computed: no class": {obs: observed{runtimeErr: &runtimesource.Error{Reason: ReasonInvalidRuntime}}},
	} {
		t.Run(name, func(t *testing.T) {
			job := &TrainJob{obs: &tc.obs}
			if got := job.IsActive(); got != tc.active {
				t.Errorf("IsActive = %v, want %v", got, tc.active)
			}
			if got := job.PriorityClass(); got != tc.priorityClass {
				t.Errorf("PriorityClass = %q, want %q", got, tc.priorityClass)
			}
		})
	}
}
