package forecast_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestEndOfTakesTheFirstSourceThatTellsIt(t *testing.T) {
	now := time.Date(2026, 12, 4, 14, 0, 0, 0, time.UTC)
	job := func(ran time.Duration, status *trainer.TrainerStatus) (*trainjob.TrainJob, *kueue.Workload) {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "llm"}}
		j.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To("ClusterTrainingRuntime")}
		j.Spec.Suspend = ptr.To(false)
		j.Status.TrainerStatus = status
		wl := &kueue.Workload{}
		wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-ran))}}
		return j, wl
	}
	reported := func(left int32, ago time.Duration, progress int32) *trainer.TrainerStatus {
		s := &trainer.TrainerStatus{EstimatedRemainingSeconds: ptr.To(left), LastUpdatedTime: metav1.NewTime(now.Add(-ago))}
		if progress > 0 {
			s.ProgressPercentage = ptr.To(progress)
		}
		return s
	}
	history := forecast.History{}
	history.Add("ClusterTrainingRuntime/torch", 90*time.Minute)
	history.Add("ClusterTrainingRuntime/torch", 2*time.Hour)
	history.Add("ClusterTrainingRuntime/torch", 3*time.Hour)
	for name, tc := range map[string]struct {
		ran      time.Duration
		status   *trainer.TrainerStatus
		history  forecast.History
		maxExec  *int32
		wantEnd  time.Duration // from now
		wantFrom string
		wantWhy  string
	}{
		"reported, believed: it ran longer than it says is left": {ran: 30 * time.Minute, status: reported(600, time.Minute, 0), wantEnd: 9 * time.Minute, wantFrom: forecast.FromReported},
		"reported, believed: it ran past the trust time":         {ran: 20 * time.Minute, status: reported(7200, 0, 0), wantEnd: 2 * time.Hour, wantFrom: forecast.FromReported},
		"reported nearly done too early: its progress instead":   {ran: 2 * time.Minute, status: reported(600, 0, 20), wantEnd: 8 * time.Minute, wantFrom: forecast.FromProgress},
		"no report: its runtime's median run":                    {ran: time.Hour, history: history, wantEnd: time.Hour, wantFrom: forecast.FromHistory},
		// Past the median (2h) of 90m, 2h and 3h: the runs longer than
		// its 2h10m so far ended at 3h.
		"past its runtime's median: as the longer runs ended": {ran: 2*time.Hour + 10*time.Minute, history: history, wantEnd: 50 * time.Minute, wantFrom: forecast.FromHistory},
		"outlived its history: the maximum execution time":    {ran: 2*time.Hour + time.Minute, history: forecast.History{"ClusterTrainingRuntime/torch": {time.Hour}}, maxExec: ptr.To[int32](4 * 3600), wantEnd: 2*time.Hour - time.Minute, wantFrom: forecast.FromMaxExecution},
		"outlived every run, nothing else: said so, not 'no history'": {ran: 4 * time.Hour, history: history,
			wantWhy: "no time left reported, no progress, it has run longer than any of the 3 finished runs of its runtime (the longest 3h0m0s), no maximum execution time"},
		"nothing tells it": {ran: time.Hour, wantWhy: "no time left reported, no progress, no history of its runtime, no maximum execution time"},
	} {
		t.Run(name, func(t *testing.T) {
			j, wl := job(tc.ran, tc.status)
			wl.Spec.MaximumExecutionTimeSeconds = tc.maxExec
			h := tc.history
			if h == nil {
				h = forecast.History{}
			}
			end, from, why := forecast.EndOf(j, wl, h, now)
			if from != tc.wantFrom || why != tc.wantWhy || (from != "" && !end.Equal(now.Add(tc.wantEnd))) || (from == "" && !end.IsZero()) {
				t.Errorf("EndOf: %v from %q (why %q); want in %v from %q (why %q)", end.Sub(now), from, why, tc.wantEnd, tc.wantFrom, tc.wantWhy)
			}
		})
	}
}

func TestRanForCountsSucceededRunsOnly(t *testing.T) {
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	wl := func(reason string) *kueue.Workload {
		w := &kueue.Workload{}
		w.Status.Conditions = []metav1.Condition{
			{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)},
			{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at.Add(40 * time.Minute))},
		}
		return w
	}
	if d, ok := forecast.RanFor(wl(kueue.WorkloadFinishedReasonSucceeded)); !ok || d != 40*time.Minute {
		t.Errorf("a succeeded run: %v, %v", d, ok)
	}
	if _, ok := forecast.RanFor(wl(kueue.WorkloadFinishedReasonFailed)); ok {
		t.Error("a failed run counted")
	}
}
