package preemptcost

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
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
		want  Signals
	}{
		"initializer still running: not training, whatever it reports": {job: job(0, ptr.To[int32](90)), roles: withInit, wl: &kueue.Workload{},
			want: Signals{ProgressPercent: ptr.To[int32](90), RemainingSeconds: ptr.To[int32](60)}},
		"initializer done: training": {job: job(1, ptr.To[int32](90)), roles: withInit, wl: &kueue.Workload{},
			want: Signals{Training: true, ProgressPercent: ptr.To[int32](90), RemainingSeconds: ptr.To[int32](60)}},
		"no initializer: training": {job: job(0, nil), roles: trainerOnly, wl: &kueue.Workload{}, want: Signals{Training: true}},
		"roles unknown: not training": {job: job(1, ptr.To[int32](50)), wl: &kueue.Workload{},
			want: Signals{ProgressPercent: ptr.To[int32](50), RemainingSeconds: ptr.To[int32](60)}},
		"preempted 3 times, evicted otherwise 4": {job: job(0, nil), roles: trainerOnly, wl: preempted, want: Signals{Training: true, Preemptions: 3}},
		"admitted 90 s ago":                      {job: job(0, nil), roles: trainerOnly, wl: admittedAt(now.Add(-90 * time.Second)), want: Signals{Training: true, RunSeconds: ptr.To[int64](90)}},
		// Evicted, still admitted while its job stops, its preemption
		// counted already: not running, so its boost is 0 before it is
		// pending (it would preempt a peer with a running job's boost).
		"evicted for a preemption, not stopped yet": {job: job(0, nil), roles: trainerOnly, wl: func() *kueue.Workload {
			wl := admittedAt(now.Add(-90 * time.Second))
			wl.Status.SchedulingStats = preempted.Status.SchedulingStats
			wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: kueue.WorkloadEvictedByPreemption})
			return wl
		}(), want: Signals{Training: true, Preemptions: 3}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SignalsOf(tc.job, tc.roles, tc.wl, now, "ckpt")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The last checkpoint is the Unix time the job reports under the policy's
// metric; a value that is no time, or lies ahead of our clock, is not
// believed. A declared interval is a duration of at least a minute.
func TestCheckpointSignals(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	reporting := func(value string) *trainjob.TrainJob {
		j := &trainjob.TrainJob{}
		j.Status.TrainerStatus = &trainer.TrainerStatus{Metrics: []trainer.Metric{{Name: "loss", Value: "0.1"}, {Name: "ckpt", Value: value}}}
		return j
	}
	for name, tc := range map[string]struct {
		value string
		want  *int64
	}{
		"two minutes ago": {value: strconv.FormatInt(now.Unix()-120, 10), want: ptr.To[int64](120)},
		"with a fraction": {value: strconv.FormatInt(now.Unix()-60, 10) + ".75", want: ptr.To[int64](60)},
		"in the future":   {value: strconv.FormatInt(now.Unix()+600, 10)},
		"no number":       {value: "yesterday"},
		"zero":            {value: "0"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, checkpointAgo(reporting(tc.value), "ckpt", now)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := checkpointAgo(reporting("1"), "other", now); got != nil {
		t.Errorf("another metric read as the checkpoint: %d", *got)
	}
	for value, want := range map[string]*int64{"30m": ptr.To[int64](1800), "1h": ptr.To[int64](3600), "30s": nil, "soon": nil} {
		j := &trainjob.TrainJob{}
		j.Annotations = map[string]string{names.CheckpointIntervalAnnotation: value}
		if diff := cmp.Diff(want, CheckpointInterval(j)); diff != "" {
			t.Errorf("interval %q (-want +got):\n%s", value, diff)
		}
	}
}
