package preemptcost

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestANoticeOutsideItsBoundsIsRefusedNamingTheField(t *testing.T) {
	for value, wantErr := range map[string]bool{
		`{"notice":{"seconds":120}}`:                              false,
		`{"notice":{"seconds":900}}`:                              false,
		`{"notice":{"seconds":901}}`:                              true,
		`{"notice":{"seconds":0}}`:                                true,
		`{"notice":{"seconds":-5}}`:                               true,
		`{"notice":{"secs":120}}`:                                 true,
		`{"notice":{"seconds":"2m"}}`:                             true,
		`{"notice":{"seconds":60,"terminationGraceSeconds":120}}`: false,
		`{"notice":{"seconds":60,"terminationGraceSeconds":901}}`: true,
		`{"notice":{"seconds":60,"terminationGraceSeconds":-1}}`:  true,
	} {
		_, err := Parse(value)
		if (err != nil) != wantErr {
			t.Errorf("Parse(%s) = %v; want an error: %v", value, err, wantErr)
		}
		var pe *Error
		if err != nil && errors.As(err, &pe) && !strings.Contains(value, `"`+strings.TrimPrefix(pe.Field, "notice.")+`"`) && pe.Field != "" {
			t.Errorf("Parse(%s) names %q; want the field it got wrong", value, pe.Field)
		}
	}
}

func TestAJobAsksForANoticeNoLongerThanItsQueueGives(t *testing.T) {
	queue := Policy{Notice: &NoticePart{Seconds: 120}}
	for name, tc := range map[string]struct {
		policy Policy
		asks   *string
		want   time.Duration
	}{
		"the queue's":                       {policy: queue, want: 2 * time.Minute},
		"shorter, asked":                    {policy: queue, asks: ptrTo("45s"), want: 45 * time.Second},
		"longer, asked: the queue's":        {policy: queue, asks: ptrTo("10m"), want: 2 * time.Minute},
		"none, asked":                       {policy: queue, asks: ptrTo("0s"), want: 0},
		"unreadable: none, not the queue's": {policy: queue, asks: ptrTo("soon"), want: 0},
		"no notice part":                    {policy: Policy{}, asks: ptrTo("1m"), want: 0},
	} {
		t.Run(name, func(t *testing.T) {
			job := &trainjob.TrainJob{}
			if tc.asks != nil {
				job.Annotations = map[string]string{names.PreemptionNoticeAnnotation: *tc.asks}
			}
			if got := NoticeLength(tc.policy, job); got != tc.want {
				t.Errorf("NoticeLength = %s; want %s", got, tc.want)
			}
		})
	}
}

// evicted is a Workload evicted for reason at since, holding its quota.
func evicted(reason string, since time.Time) *kueue.Workload {
	wl := &kueue.Workload{}
	wl.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue},
		{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(since)},
	}
	return wl
}

func TestOnlyAPreemptionOrADrainGetsANotice(t *testing.T) {
	since := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for reason, want := range map[string]bool{
		kueue.WorkloadEvictedByPreemption:          true,
		kueue.WorkloadEvictedByClusterQueueStopped: true,
		kueue.WorkloadEvictedByLocalQueueStopped:   true,
		kueue.WorkloadEvictedByPodsReadyTimeout:    false,
		kueue.WorkloadDeactivated:                  false,
		kueue.WorkloadEvictedByFlavorMigration:     true,
		kueue.WorkloadEvictedByAdmissionCheck:      false,
		kueue.WorkloadMaximumExecutionTimeExceeded: false,
	} {
		n, ok := NoticeOf(evicted(reason, since), 2*time.Minute)
		if ok != want {
			t.Errorf("%s: a notice: %v; want %v", reason, ok, want)
		}
		if ok && (!n.Since.Equal(since) || !n.Until.Equal(since.Add(2*time.Minute))) {
			t.Errorf("%s: notice %v..%v; want from the eviction for 2m", reason, n.Since, n.Until)
		}
	}
	if _, ok := NoticeOf(evicted(kueue.WorkloadEvictedByPreemption, since), 0); ok {
		t.Error("a notice of length 0 was given")
	}
	if _, ok := NoticeOf(&kueue.Workload{}, time.Minute); ok {
		t.Error("a Workload not evicted got a notice")
	}
}

func TestANoticeWrittenIsReadBackOnlyForTheEvictionItWasFor(t *testing.T) {
	since := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	wl := evicted(kueue.WorkloadEvictedByPreemption, since)
	n, _ := NoticeOf(wl, time.Minute)
	n.LastCheckpoint = since.Unix() - 300
	wl.Annotations = map[string]string{names.PreemptingAnnotation: n.Value()}
	got, ok := NoticeOn(wl)
	if !ok {
		t.Fatalf("NoticeOn(%s) found none", n.Value())
	}
	if diff := cmp.Diff(n.Value(), got.Value()); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}
	later := evicted(kueue.WorkloadEvictedByPreemption, since.Add(time.Hour))
	later.Annotations = wl.Annotations
	if _, ok := NoticeOn(later); ok {
		t.Error("a notice of an earlier eviction was read for a later one")
	}
	ended := wl.DeepCopy()
	ended.Status.Conditions[1].Status = metav1.ConditionFalse
	if _, ok := NoticeOn(ended); ok {
		t.Error("a notice was read on a Workload no longer evicted")
	}
	forged := wl.DeepCopy()
	forged.Annotations[names.PreemptingAnnotation] = `{"since":` + strconv.FormatInt(since.Unix(), 10) + `,"until":1}`
	if _, ok := NoticeOn(forged); ok {
		t.Error("a notice ending before it began was read")
	}
}

func TestOnlyACheckpointMadeInTheNoticeEndsIt(t *testing.T) {
	since := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	n := Notice{Since: since, Until: since.Add(2 * time.Minute)}
	now := since.Add(30 * time.Second)
	reports := func(v string) *trainjob.TrainJob {
		j := &trainjob.TrainJob{}
		j.Status.TrainerStatus = &trainer.TrainerStatus{Metrics: []trainer.Metric{{Name: DefaultCheckpointMetric, Value: v}}}
		return j
	}
	for name, tc := range map[string]struct {
		job  *trainjob.TrainJob
		want bool
	}{
		"none reported":               {job: &trainjob.TrainJob{}},
		"before the eviction":         {job: reports(strconv.FormatInt(since.Unix()-1, 10))},
		"at the eviction":             {job: reports(strconv.FormatInt(since.Unix(), 10)), want: true},
		"10 s into the notice":        {job: reports(strconv.FormatInt(since.Unix()+10, 10)), want: true},
		"a fraction, 10.5 s in":       {job: reports(strconv.FormatFloat(float64(since.Unix())+10.5, 'f', 1, 64)), want: true},
		"in the future: not believed": {job: reports(strconv.FormatInt(now.Unix()+60, 10))},
		"not a time":                  {job: reports("soon")},
	} {
		if _, got := CheckpointedIn(n, tc.job, DefaultCheckpointMetric, now); got != tc.want {
			t.Errorf("%s: checkpointed in the notice: %v; want %v", name, got, tc.want)
		}
	}
}

func TestTheWorkSavedIsWhatAStopAtTheEvictionWouldHaveLost(t *testing.T) {
	since := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	started := since.Add(-time.Hour)
	for name, tc := range map[string]struct {
		last int64
		want int64
	}{
		"since its last checkpoint, 10 min before": {last: since.Unix() - 600, want: 600},
		"no checkpoint before: since its start":    {last: 0, want: 3600},
		"a checkpoint before its start: its start": {last: started.Unix() - 50, want: 3600},
	} {
		n := Notice{Since: since, Until: since.Add(2 * time.Minute), LastCheckpoint: tc.last}
		if got := n.Saved(started); got != tc.want {
			t.Errorf("%s: saved %d s; want %d", name, got, tc.want)
		}
	}
}

func TestTheGracePromisedIsShortOnlyWhereThePodsHaveLess(t *testing.T) {
	promise := Policy{Notice: &NoticePart{Seconds: 60, TerminationGraceSeconds: 120}}
	for name, tc := range map[string]struct {
		policy Policy
		have   *int64
		want   int64
		inject bool
	}{
		"Kubernetes' 30 s":                      {policy: promise, want: 120, inject: true},
		"the runtime's 60":                      {policy: promise, have: ptrTo[int64](60), want: 120, inject: true},
		"the runtime's 300, more than promised": {policy: promise, have: ptrTo[int64](300)},
		"the runtime's 120, as promised":        {policy: promise, have: ptrTo[int64](120)},
		"no promise":                            {policy: Policy{Notice: &NoticePart{Seconds: 60}}},
		"no notice":                             {policy: Policy{}},
	} {
		got, inject := TerminationGrace(tc.policy, tc.have)
		if inject != tc.inject || inject && got != tc.want {
			t.Errorf("%s: %d, short %v; want %d, short %v", name, got, inject, tc.want, tc.inject)
		}
	}
}
