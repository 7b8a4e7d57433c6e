package integration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A dispatched job is never active here, whatever status its worker
// reports, and runs (is unsuspended, to the job framework) exactly while its
// Workload is admitted through MultiKueue, or through a check whose
// AdmissionCheck was deleted meanwhile.
func TestDispatchedJob(t *testing.T) {
	admitted := &kueue.Workload{Status: kueue.WorkloadStatus{Conditions: []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue},
	}}}
	cases := map[string]struct {
		obs           observed
		wantSuspended bool
	}{
		"no Workload":                      {obs: observed{}, wantSuspended: true},
		"admitted without MultiKueue":      {obs: observed{workload: admitted}, wantSuspended: true},
		"admitted through MultiKueue":      {obs: observed{workload: admitted, dispatch: dispatch{check: true}}},
		"its AdmissionCheck deleted since": {obs: observed{workload: admitted, dispatch: dispatch{lostChecks: []string{"mk"}}}},
		"a MultiKueue check, not admitted": {obs: observed{workload: &kueue.Workload{}, dispatch: dispatch{check: true}}, wantSuspended: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := &TrainJob{TrainJob: trainjob.TrainJob{Spec: trainjob.Spec{ManagedBy: ptr.To(kueue.MultiKueueControllerName), Suspend: ptr.To(true)}}, obs: &tc.obs}
			job.Status.JobsStatus = []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](4), Ready: ptr.To[int32](4)}}
			tc.obs.jobs = job.Status.JobsStatus
			tc.obs.runner = trainjob.RunRemotely
			if job.IsActive() {
				t.Error("IsActive: the worker's pods are not this cluster's")
			}
			if got := job.IsSuspended(); got != tc.wantSuspended {
				t.Errorf("IsSuspended = %v, want %v", got, tc.wantSuspended)
			}
		})
	}
}
