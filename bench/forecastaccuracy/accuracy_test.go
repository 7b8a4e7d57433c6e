package forecastaccuracy_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// The load: a queue of two 8-GPU nodes (two jobs at a time), over-
// subscribed by jobs of 8 GPUs each, created together in this order; a
// job's runtime fixes how long its pods run (kwok completes them), and
// half of them report progress and time left as Trainer's status server
// would (the bench writes it, every few seconds, from the known duration).
var load = []struct {
	runtime   string
	runs      time.Duration
	reporting bool
}{
	{"report-90", 90 * time.Second, true}, {"silent-60", 60 * time.Second, false},
	{"report-60", 60 * time.Second, true}, {"silent-90", 90 * time.Second, false},
	{"report-120", 120 * time.Second, true}, {"silent-60", 60 * time.Second, false},
	{"report-90", 90 * time.Second, true}, {"silent-120", 120 * time.Second, false},
	{"report-60", 60 * time.Second, true}, {"silent-90", 90 * time.Second, false},
	{"report-120", 120 * time.Second, true}, {"silent-60", 60 * time.Second, false},
}

// sample is one forecast of one waiting job.
type sample struct {
	job      string
	at       time.Time
	expected time.Time // zero: unknown
	// behindReporting: every job whose end it waits for reports its time
	// left or progress.
	behindReporting bool
}

// BenchmarkExpectedStartAccuracy records, every 5 s, each waiting job's
// expected start, and compares it at the end with when the job really
// started (its Workload's admission): the absolute error as a fraction of
// the job's real wait (creation to admission), median and p90, for
// samples behind reporting jobs only and for the rest, and how often the
// answer was "unknown". Run it with -benchtime=1x: one pass is minutes.
func BenchmarkExpectedStartAccuracy(b *testing.B) {
	for range b.N {
		samples, started, created := runLoad(b)
		s := summarize(samples, started, created)
		b.ReportMetric(s.BehindReporting.Median, "median-err-behind-reporting")
		b.ReportMetric(s.BehindReporting.P90, "p90-err-behind-reporting")
		b.ReportMetric(s.Rest.Median, "median-err-rest")
		b.ReportMetric(s.Rest.P90, "p90-err-rest")
		b.ReportMetric(s.UnknownShare, "unknown-share")
		out, _ := json.MarshalIndent(s, "", "  ")
		dir := filepath.Join("..", "..", ".bench", "forecast")
		if err := os.MkdirAll(dir, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "summary.json"), out, 0o644)
		}
		b.Logf("%s", out)
	}
}

func runLoad(b *testing.B) (samples []sample, started, created map[string]time.Time) {
	ns, lq := fixtures.NamespaceWithQueue(b, ctx, k8s, "forecast", 2, 8)
	made := map[string]bool{}
	for _, l := range load {
		if !made[l.runtime] {
			fixtures.Create(b, ctx, k8s, fixtures.TrainingRuntime(ns, l.runtime, fixtures.TorchPolicy(1),
				fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Annotations: fixtures.RunFor(l.runs)}))
			made[l.runtime] = true
		}
	}
	cq := ns
	reporting := map[string]time.Duration{}
	var jobs []*trainer.TrainJob
	for i, l := range load {
		tj := fixtures.TrainJob(ns, fmt.Sprintf("job-%02d", i), l.runtime, lq)
		fixtures.Create(b, ctx, k8s, tj)
		jobs = append(jobs, tj)
		if l.reporting {
			reporting[ns+"/"+tj.Name] = l.runs
		}
		time.Sleep(time.Second) // Kueue orders equal priorities by creation
	}
	started, created = map[string]time.Time{}, map[string]time.Time{}
	e := &explain.Explainer{Client: ours}
	deadline := time.Now().Add(30 * time.Minute)
	for len(started) < len(jobs) && time.Now().Before(deadline) {
		now := time.Now()
		report(b, jobs, reporting, now)
		starts, err := e.Forecasts(ctx, []string{cq})
		if err != nil {
			b.Fatal(err)
		}
		for _, tj := range jobs {
			key := tj.Namespace + "/" + tj.Name
			wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
			if err != nil {
				continue
			}
			created[key] = wl.CreationTimestamp.Time
			if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
				if _, ok := started[key]; !ok {
					started[key] = c.LastTransitionTime.Time
				}
				continue
			}
			s, ok := starts[key]
			if !ok {
				continue
			}
			sm := sample{job: key, at: now, expected: s.At, behindReporting: len(s.After) > 0}
			for _, a := range s.After {
				if a.From != forecast.FromReported && a.From != forecast.FromProgress {
					sm.behindReporting = false
				}
			}
			samples = append(samples, sm)
		}
		time.Sleep(5 * time.Second)
	}
	if len(started) < len(jobs) {
		b.Fatalf("%d of %d jobs started within 30 min", len(started), len(jobs))
	}
	return samples, started, created
}

// report writes, for each running reporting job, what Trainer's status
// server would: progress and time left from its known duration, counted
// from its Workload's admission.
func report(b *testing.B, jobs []*trainer.TrainJob, reporting map[string]time.Duration, now time.Time) {
	for _, tj := range jobs {
		runs, ok := reporting[tj.Namespace+"/"+tj.Name]
		if !ok {
			continue
		}
		wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
		if err != nil {
			continue
		}
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
		if c == nil || c.Status != metav1.ConditionTrue || apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			continue
		}
		ran := now.Sub(c.LastTransitionTime.Time)
		left := max(runs-ran, 0)
		status := map[string]any{"trainerStatus": map[string]any{
			"progressPercentage":        ptr.To(int32(min(99, 100*ran/runs))),
			"estimatedRemainingSeconds": ptr.To(int32(left / time.Second)),
			"lastUpdatedTime":           metav1.NewTime(now),
		}}
		data, _ := json.Marshal(map[string]any{"status": status})
		got := &trainer.TrainJob{}
		got.Namespace, got.Name = tj.Namespace, tj.Name
		if err := k8s.Status().Patch(ctx, got, client.RawPatch("application/merge-patch+json", data)); err != nil {
			b.Logf("reporting %s: %v", tj.Name, err)
		}
	}
}

// Errors are absolute errors as fractions of the real wait.
type Errors struct {
	Samples int     `json:"samples"`
	Median  float64 `json:"median"`
	P90     float64 `json:"p90"`
}

// Summary is the benchmark's result.
type Summary struct {
	Jobs            int     `json:"jobs"`
	BehindReporting Errors  `json:"behindReportingJobs"`
	Rest            Errors  `json:"rest"`
	Unknown         int     `json:"unknownSamples"`
	UnknownShare    float64 `json:"unknownShare"`
}

func summarize(samples []sample, started, created map[string]time.Time) Summary {
	var reportingErr, restErr []float64
	unknown := 0
	for _, s := range samples {
		wait := started[s.job].Sub(created[s.job])
		if wait <= 0 {
			continue
		}
		if s.expected.IsZero() {
			unknown++
			continue
		}
		e := math.Abs(float64(s.expected.Sub(started[s.job]))) / float64(wait)
		if s.behindReporting {
			reportingErr = append(reportingErr, e)
		} else {
			restErr = append(restErr, e)
		}
	}
	return Summary{Jobs: len(started), BehindReporting: errorsOf(reportingErr), Rest: errorsOf(restErr),
		Unknown: unknown, UnknownShare: float64(unknown) / float64(max(len(samples), 1))}
}

func errorsOf(fracs []float64) Errors {
	if len(fracs) == 0 {
		return Errors{}
	}
	sorted := slices.Clone(fracs)
	sort.Float64s(sorted)
	at := func(q float64) float64 { return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))] }
	return Errors{Samples: len(sorted), Median: at(0.5), P90: at(0.9)}
}
