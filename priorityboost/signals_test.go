package priorityboost

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func admittedAt(at time.Time) *kueue.Workload {
	wl := &kueue.Workload{}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
	return wl
}

func TestSignalsOf(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	withInit := []podsets.Role{
		{Name: "dataset-initializer", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 2},
	}
	trainerOnly := withInit[1:]
	job := func(initSucceeded int32, progress *int32) *trainjob.TrainJob {
		j := &trainjob.TrainJob{}
		j.Status.JobsStatus = []trainer.JobStatus{{Name: "dataset-initializer", Succeeded: ptr.To(initSucceeded)}, {Name: "node", Active: ptr.To[int32](2)}}
		if progress != nil {
			j.Status.TrainerStatus = &trainer.TrainerStatus{ProgressPercentage: progress, EstimatedRemainingSeconds: ptr.To[int32](60), LastUpdatedTime: metav1.Now()}
		}
		return j
	}
	preempted := &kueue.Workload{}
	preempted.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{
		{Reason: kueue.WorkloadEvictedByPreemption, UnderlyingCause: "InClusterQueue", Count: 2},
		{Reason: kueue.WorkloadEvictedByPreemption, UnderlyingCause: "InCohortReclamation", Count: 1},
		{Reason: kueue.WorkloadEvictedByPodsReadyTimeout, Count: 4},
	}}
	for name, tc := range map[string]struct {
		job   *trainjob.TrainJob
		roles []podsets.Role
		wl    *kueue.Workload
		want  preemptcost.Signals
	}{
		"initializer still running: not training, whatever it reports": {job: job(0, ptr.To[int32](90)), roles: withInit, wl: &kueue.Workload{},
			want: preemptcost.Signals{ProgressPercent: ptr.To[int32](90), RemainingSeconds: ptr.To[int32](60)}},
		"initializer done: training": {job: job(1, ptr.To[int32](90)), roles: withInit, wl: &kueue.Workload{},
			want: preemptcost.Signals{Training: true, ProgressPercent: ptr.To[int32](90), RemainingSeconds: ptr.To[int32](60)}},
		"no initializer: training": {job: job(0, nil), roles: trainerOnly, wl: &kueue.Workload{}, want: preemptcost.Signals{Training: true}},
		"roles unknown: not training": {job: job(1, ptr.To[int32](50)), wl: &kueue.Workload{},
			want: preemptcost.Signals{ProgressPercent: ptr.To[int32](50), RemainingSeconds: ptr.To[int32](60)}},
		"preempted 3 times, evicted otherwise 4": {job: job(0, nil), roles: trainerOnly, wl: preempted, want: preemptcost.Signals{Training: true, Preemptions: 3}},
		"admitted 90 s ago":                      {job: job(0, nil), roles: trainerOnly, wl: admittedAt(now.Add(-90 * time.Second)), want: preemptcost.Signals{Training: true, RunSeconds: ptr.To[int64](90)}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, signalsOf(tc.job, tc.roles, tc.wl, now)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
