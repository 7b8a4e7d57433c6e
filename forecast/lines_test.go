package forecast

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// replayEveryJob is the forecast as first written: at every release,
// every job still waiting tried in Kueue's order. Slow (waiting jobs²),
// obviously Kueue's loop: the oracle Forecast's lines must agree with.
func replayEveryJob(p Plan) map[string]Start {
	l := NewLedger(p.Queue)
	var ends []Running
	var unknown []Running
	for _, r := range p.Running {
		if r.From == "" {
			unknown = append(unknown, r)
		} else {
			ends = append(ends, r)
		}
	}
	byEnd := func(a, b Running) int { return cmp.Or(a.End.Compare(b.End), cmp.Compare(a.Job, b.Job)) }
	slices.SortFunc(ends, byEnd)
	out := map[string]Start{}
	now, released := p.Now, []Running(nil)
	left := slices.Clone(p.Waiting)
	for {
		for i := 0; i < len(left); {
			w := left[i]
			try := l.clone()
			a, booked := assignOn(try, w.Roles, p.Queue)
			if !a.Fits() {
				if p.StrictFIFO {
					break
				}
				i++
				continue
			}
			l = try
			out[w.Job] = Start{At: now, After: lastThree(released)}
			left = slices.Delete(left, i, i+1)
			if w.From == "" {
				unknown = append(unknown, Running{Job: w.Job, Why: w.Why})
				continue
			}
			ends = append(ends, Running{Job: w.Job, End: now.Add(w.Runs), From: w.From, Uses: booked})
			slices.SortFunc(ends, byEnd)
		}
		if len(left) == 0 {
			return out
		}
		if len(ends) == 0 {
			for _, w := range left {
				out[w.Job] = Start{Unknown: unknownWhy(unknown)}
			}
			return out
		}
		next := ends[0]
		ends = ends[1:]
		if next.End.After(now) {
			now = next.End
		}
		for f, rl := range next.Uses {
			l.give(f, rl)
		}
		released = append(released, next)
	}
}

// randomPlan is a ClusterQueue of two GPU flavors (the second reached by
// a nodeSelector, or by borrowing from a cohort), some of its quota held
// by running jobs, and waiting jobs of a few shapes with known and
// unknown run times.
func randomPlan(r *rand.Rand, waiting int) Plan {
	now := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	a100 := fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: fmt.Sprint(8 * (1 + r.IntN(4)))})
	h100 := fixtures.FlavorQuotas("h100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: fmt.Sprint(8 * r.IntN(3)), BorrowingLimit: "16"})
	cq := fixtures.GPUQueue("cq", "pool", a100, h100)
	if r.IntN(2) == 0 {
		cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{WhenCanBorrow: kueue.TryNextFlavor}
	}
	q := &Queue{ClusterQueue: cq,
		Flavors:     fixtures.FlavorsByName(fixtures.ResourceFlavor("a100", map[string]string{"gpu": "a100"}), fixtures.ResourceFlavor("h100", map[string]string{"gpu": "h100"})),
		CohortLends: map[string]corev1.ResourceList{"h100": {fixtures.GPU: resource.MustParse(fmt.Sprint(8 * r.IntN(3)))}}}
	p := Plan{Queue: q, Now: now, StrictFIFO: r.IntN(4) == 0}
	for i := range 1 + r.IntN(3) {
		run := Running{Job: fmt.Sprintf("ns/running-%d", i), Uses: map[string]corev1.ResourceList{"a100": {fixtures.GPU: resource.MustParse("8")}}}
		fixtures.Reserving(cq, "a100", corev1.ResourceList{fixtures.GPU: resource.MustParse("8")})
		if r.IntN(5) != 0 {
			run.End, run.From = now.Add(time.Duration(1+r.IntN(60))*time.Minute), FromHistory
		}
		p.Running = append(p.Running, run)
	}
	for i := range waiting {
		role := fixtures.PodRole("node", int32(1+r.IntN(2)), corev1.ResourceList{fixtures.GPU: resource.MustParse(fmt.Sprint([]int{1, 4, 8}[r.IntN(3)]))})
		if r.IntN(4) == 0 {
			role.Template.Spec.NodeSelector = map[string]string{"gpu": "h100"}
		}
		w := Waiting{Job: fmt.Sprintf("ns/job-%03d", i), Roles: []podsets.Role{role}}
		if r.IntN(8) != 0 {
			w.Runs, w.From = time.Duration(1+r.IntN(90))*time.Minute, FromHistory
		}
		p.Waiting = append(p.Waiting, w)
	}
	return p
}

// Trying a line's head once per release gives every job the start that
// replaying every job at every release gives: random queues of flavors,
// borrowing, nodeSelectors, strict and best-effort FIFO, unknown ends.
func TestForecastByLinesAgreesWithReplayingEveryJob(t *testing.T) {
	for seed := range uint64(300) {
		p := randomPlan(rand.New(rand.NewPCG(seed, 7)), 1+int(seed%40))
		want, got := replayEveryJob(p), Forecast(p)
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d (strict %v, %d waiting): Forecast disagrees with the replay (-replay +Forecast):\n%s", seed, p.StrictFIFO, len(p.Waiting), diff)
		}
	}
}

// BenchmarkForecast: one ClusterQueue with room for one 8-GPU job and n
// waiting, every run time known (the case that replayed every job at
// every release: n²/2 fits). make bench-forecast-scale prints the sweep.
func BenchmarkForecast(b *testing.B) {
	for _, n := range []int{1000, 3000, 10000} {
		p := queueWithRoomForOne(n)
		b.Run(fmt.Sprintf("waiting=%d", n), func(b *testing.B) {
			for b.Loop() {
				if starts := Forecast(p); len(starts) != n || !starts[p.Waiting[n-1].Job].Known() {
					b.Fatalf("%d starts, the last known: %v", len(starts), starts[p.Waiting[n-1].Job].Known())
				}
			}
		})
	}
}

func queueWithRoomForOne(n int) Plan {
	now := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	cq := fixtures.Reserving(fixtures.GPUQueue("cq", "", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"})), "a100", corev1.ResourceList{fixtures.GPU: resource.MustParse("8")})
	p := Plan{Queue: &Queue{ClusterQueue: cq, Flavors: fixtures.FlavorsByName(fixtures.ResourceFlavor("a100", nil))}, Now: now,
		Running: []Running{{Job: "ns/running", Uses: map[string]corev1.ResourceList{"a100": {fixtures.GPU: resource.MustParse("8")}}, End: now.Add(time.Minute), From: FromHistory}}}
	for i := range n {
		p.Waiting = append(p.Waiting, Waiting{Job: fmt.Sprintf("ns/job-%05d", i), Runs: 10 * time.Minute, From: FromMaxExecution,
			Roles: []podsets.Role{fixtures.PodRole("node", 1, corev1.ResourceList{fixtures.GPU: resource.MustParse("8")})}})
	}
	return p
}
