package forecast_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

func gpus(n string) map[string]corev1.ResourceList {
	return map[string]corev1.ResourceList{"a100": {fixtures.GPU: resource.MustParse(n)}}
}

// A 16-GPU queue, full: llm-1 (8 GPUs) says it has 10 minutes left,
// sweep-2 (8) is expected to end in 4 from its runtime's history.
func TestForecastPlaysTheQueueForward(t *testing.T) {
	now := time.Date(2026, 12, 4, 13, 53, 0, 0, time.UTC)
	queue := func() *forecast.Queue {
		cq := fixtures.GPUQueue("cq", "", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "16"}))
		return &forecast.Queue{ClusterQueue: fixtures.Reserving(cq, "a100", fixtures.Requests(t, "nvidia.com/gpu", "16")), Flavors: fixtures.FlavorsByName(fixtures.ResourceFlavor("a100", nil))}
	}
	llm := forecast.Running{Job: "ml/llm-1", Uses: gpus("8"), End: now.Add(10 * time.Minute), From: forecast.FromReported}
	sweep := forecast.Running{Job: "ml/sweep-2", Uses: gpus("8"), End: now.Add(4 * time.Minute), From: forecast.FromHistory}
	held := forecast.Running{Job: "ml/notebook", Uses: gpus("8"), Why: "no time left reported, no progress, no history of its runtime, no maximum execution time"}
	waiting := func(name string, pods int32, runs time.Duration) forecast.Waiting {
		w := forecast.Waiting{Job: name, Roles: []podsets.Role{fixtures.PodRole("node", pods, fixtures.Requests(t, "nvidia.com/gpu", "4"))}, Runs: runs}
		if runs > 0 {
			w.From = forecast.FromHistory
		} else {
			w.Why = "no history of its runtime, no maximum execution time"
		}
		return w
	}
	for name, tc := range map[string]struct {
		plan forecast.Plan
		want map[string]forecast.Start
	}{
		"each job once the quota it needs is back, in Kueue's order": {
			plan: forecast.Plan{Queue: queue(), Running: []forecast.Running{llm, sweep}, Now: now,
				Waiting: []forecast.Waiting{waiting("ml/a", 2, 30*time.Minute), waiting("ml/b", 4, time.Hour)}},
			want: map[string]forecast.Start{
				"ml/a": {At: now.Add(4 * time.Minute), After: []forecast.Running{sweep}},
				// Once llm-1 and then a have given their 8 back.
				"ml/b": {At: now.Add(34 * time.Minute), After: []forecast.Running{sweep, llm,
					{Job: "ml/a", Uses: gpus("8"), End: now.Add(34 * time.Minute), From: forecast.FromHistory}}},
			},
		},
		"best effort: a later job that fits goes first": {
			plan: forecast.Plan{Queue: queue(), Running: []forecast.Running{llm, sweep}, Now: now,
				Waiting: []forecast.Waiting{waiting("ml/big", 4, time.Hour), waiting("ml/small", 2, time.Hour)}},
			want: map[string]forecast.Start{
				"ml/small": {At: now.Add(4 * time.Minute), After: []forecast.Running{sweep}},
				// small holds 8 until 1h04.
				"ml/big": {At: now.Add(64 * time.Minute), After: []forecast.Running{sweep, llm,
					{Job: "ml/small", Uses: gpus("8"), End: now.Add(64 * time.Minute), From: forecast.FromHistory}}},
			},
		},
		"strict FIFO: nothing passes the head": {
			plan: forecast.Plan{Queue: queue(), Running: []forecast.Running{llm, sweep}, Now: now, StrictFIFO: true,
				Waiting: []forecast.Waiting{waiting("ml/big", 4, time.Hour), waiting("ml/small", 2, time.Hour)}},
			want: map[string]forecast.Start{
				"ml/big":   {At: now.Add(10 * time.Minute), After: []forecast.Running{sweep, llm}},
				"ml/small": {At: now.Add(70 * time.Minute), After: []forecast.Running{sweep, llm, {Job: "ml/big", Uses: gpus("16"), End: now.Add(70 * time.Minute), From: forecast.FromHistory}}},
			},
		},
		"a job whose end can't be told holds its quota: who needs it is unknown": {
			plan: forecast.Plan{Queue: queue(), Running: []forecast.Running{held, sweep}, Now: now,
				Waiting: []forecast.Waiting{waiting("ml/a", 2, 0), waiting("ml/b", 2, time.Hour)}},
			want: map[string]forecast.Start{
				"ml/a": {At: now.Add(4 * time.Minute), After: []forecast.Running{sweep}},
				// a has no run time either: b waits on both.
				"ml/b": {Unknown: "it waits for jobs whose end can't be told: ml/a (no history of its runtime, no maximum execution time); ml/notebook (no time left reported, no progress, no history of its runtime, no maximum execution time)"},
			},
		},
		"jobs whose end can't be told for one reason, said once": {
			plan: forecast.Plan{Queue: queue(), Running: []forecast.Running{held, {Job: "ml/other", Uses: gpus("8"), Why: held.Why}}, Now: now,
				Waiting: []forecast.Waiting{waiting("ml/b", 2, time.Hour)}},
			want: map[string]forecast.Start{
				"ml/b": {Unknown: "it waits for ml/notebook, ml/other, whose end can't be told (no time left reported, no progress, no history of its runtime, no maximum execution time)"},
			},
		},
		"never fits": {
			plan: forecast.Plan{Queue: queue(), Running: []forecast.Running{llm, sweep}, Now: now, Waiting: []forecast.Waiting{waiting("ml/huge", 8, time.Hour)}},
			want: map[string]forecast.Start{"ml/huge": {Unknown: "it does not fit even once every running job has ended"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := forecast.Forecast(tc.plan)
			// The releases by who, when and how known (what they give back
			// is the test of when the next job starts).
			after := cmp.Transformer("after", func(r forecast.Running) string { return r.Job + " at " + r.End.Format(time.TimeOnly) + ", " + r.From })
			if diff := cmp.Diff(tc.want, got, after); diff != "" {
				t.Errorf("Forecast (-want +got):\n%s", diff)
			}
		})
	}
}
