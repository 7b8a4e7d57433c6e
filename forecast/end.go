package forecast

import (
	"fmt"
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// How a job's end or run time is known, in the order they are believed.
const (
	FromReported     = "reported"
	FromProgress     = "from its progress"
	FromHistory      = "from its runtime's history"
	FromMaxExecution = "its maximum execution time"
)

// History is how long the finished jobs of each runtime ran (RuntimeKey).
type History map[string][]time.Duration

// runs of the runtime, shortest first (sorted once, in place).
func (h History) runs(runtime string) []time.Duration {
	runs := h[runtime]
	if !slices.IsSorted(runs) {
		slices.Sort(runs)
	}
	return runs
}

// median of the runtime's runs; false without any.
func (h History) median(runtime string) (time.Duration, bool) {
	runs := h.runs(runtime)
	if len(runs) == 0 {
		return 0, false
	}
	return runs[len(runs)/2], true
}

// medianPast is how long a job of the runtime that has already run ran is
// expected to run in all: the median of the runs that lasted longer than
// that (a job past the median is expected to end as the longer runs did,
// not at a time already gone); false when none did.
func (h History) medianPast(runtime string, ran time.Duration) (time.Duration, bool) {
	runs := h.runs(runtime)
	i, _ := slices.BinarySearch(runs, ran+1)
	if longer := runs[i:]; len(longer) > 0 {
		return longer[len(longer)/2], true
	}
	return 0, false
}

// Add records that a finished job of runtime ran d.
func (h History) Add(runtime string, d time.Duration) { h[runtime] = append(h[runtime], d) }

// RuntimeKey names the job's runtime: kind and name (and namespace for a
// TrainingRuntime).
func RuntimeKey(job *trainjob.TrainJob) string {
	kind := ptr.Deref(job.Spec.RuntimeRef.Kind, "ClusterTrainingRuntime")
	if kind == "TrainingRuntime" {
		return kind + "/" + job.Namespace + "/" + job.Spec.RuntimeRef.Name
	}
	return kind + "/" + job.Spec.RuntimeRef.Name
}

// RanFor is how long a finished job ran: from its Workload's admission to
// its finish; false when its Workload does not tell both, or it failed.
func RanFor(wl *kueue.Workload) (time.Duration, bool) {
	adm := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	fin := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
	if adm == nil || fin == nil || fin.Status != metav1.ConditionTrue || fin.Reason != kueue.WorkloadFinishedReasonSucceeded {
		return 0, false
	}
	d := fin.LastTransitionTime.Sub(adm.LastTransitionTime.Time)
	return d, d > 0
}

// trustAfter is how long a job must have run before the time left it
// reports is believed when it reports more (trainjob.TimeLeftBelieved):
// past this every report is believed.
const trustAfter = 10 * time.Minute

// EndOf is when the running job (its Workload admitted; job nil for
// another kind's Workload) is expected to end, and how that is known; when
// it can't be told, from is "" and why says why. In order: the time left
// Trainer reports (once believed), the rate of its reported progress, the
// median of its runtime's finished runs that lasted longer than it has run
// so far, Kueue's maximumExecutionTimeSeconds. An estimate already past is
// not believed (the job outlived it), and the next is tried.
func EndOf(job *trainjob.TrainJob, wl *kueue.Workload, h History, now time.Time) (end time.Time, from, why string) {
	adm := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if adm == nil || adm.Status != metav1.ConditionTrue {
		return time.Time{}, "", "it is not admitted"
	}
	since := adm.LastTransitionTime.Time
	ran := now.Sub(since)
	if job == nil { // another kind's Workload
		if end, from := maxExecutionEnd(wl, since, now); from != "" {
			return end, from, ""
		}
		return time.Time{}, "", "it is not a TrainJob and has no maximum execution time"
	}
	if ts := job.Status.TrainerStatus; ts != nil && !job.Suspended() {
		at := ts.LastUpdatedTime.Time
		if left := ts.EstimatedRemainingSeconds; left != nil && *left >= 0 && !at.IsZero() && !at.After(now) {
			l := time.Duration(*left) * time.Second
			if end := at.Add(l); trainjob.TimeLeftBelieved(ran, l, trustAfter) && !end.Before(now) {
				return end, FromReported, ""
			}
		}
		if p := ts.ProgressPercentage; p != nil && *p > 0 && *p < 100 && ran >= time.Minute {
			if end := since.Add(time.Duration(float64(ran) * 100 / float64(*p))); !end.Before(now) {
				return end, FromProgress, ""
			}
		}
	}
	if d, ok := h.medianPast(RuntimeKey(job), ran); ok {
		return since.Add(d), FromHistory, ""
	}
	if end, from := maxExecutionEnd(wl, since, now); from != "" {
		return end, from, ""
	}
	return time.Time{}, "", noEndWhy(h.runs(RuntimeKey(job)))
}

// noEndWhy says why a running TrainJob's end can't be told, given its
// runtime's finished runs: never "no history" when there is one.
func noEndWhy(runs []time.Duration) string {
	history := "no history of its runtime"
	if len(runs) > 0 {
		history = fmt.Sprintf("it has run longer than any of the %d finished runs of its runtime (the longest %s)", len(runs), runs[len(runs)-1].Round(time.Second))
	}
	return "no time left reported, no progress, " + history + ", no maximum execution time"
}

// maxExecutionEnd is when Kueue's maximumExecutionTimeSeconds ends a job
// admitted at since; "" without one, or one already past.
func maxExecutionEnd(wl *kueue.Workload, since, now time.Time) (time.Time, string) {
	if m := wl.Spec.MaximumExecutionTimeSeconds; m != nil && *m > 0 {
		if end := since.Add(time.Duration(*m) * time.Second); !end.Before(now) {
			return end, FromMaxExecution
		}
	}
	return time.Time{}, ""
}

// RunsFor is how long a waiting job is expected to run once admitted: the
// median run of its runtime's finished jobs, else Kueue's
// maximumExecutionTimeSeconds; "" when it can't be told.
func RunsFor(job *trainjob.TrainJob, wl *kueue.Workload, h History) (time.Duration, string) {
	if job != nil {
		if d, ok := h.median(RuntimeKey(job)); ok {
			return d, FromHistory
		}
	}
	if wl != nil {
		if m := wl.Spec.MaximumExecutionTimeSeconds; m != nil && *m > 0 {
			return time.Duration(*m) * time.Second, FromMaxExecution
		}
	}
	return 0, ""
}
