package explain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// Running is a job admitted to the ClusterQueue: the quota it holds, per
// flavor, and when it is expected to end.
type Running struct {
	Job  string
	Uses map[string]corev1.ResourceList
	// End is when it is expected to end, From how that is known
	// (EndFrom*); From "" when it is not: its quota is then taken to be
	// held for good.
	End  time.Time
	From string
}

// Waiting is a job waiting in the ClusterQueue.
type Waiting struct {
	Job   string
	Roles []podsets.Role
	// Runs is how long it is expected to run once admitted, From how that
	// is known; From "" when it is not.
	Runs time.Duration
	From string
}

// Plan is a ClusterQueue to play forward: its quota now (Queue: its
// reservations, what its cohort lends now), the jobs it runs, and the
// jobs waiting in Kueue's order.
type Plan struct {
	Queue   *Queue
	Running []Running
	Waiting []Waiting
	// StrictFIFO: a job that does not fit holds every job behind it
	// (Kueue's StrictFIFO); otherwise a later job that fits goes first
	// (BestEffortFIFO, Kueue's default).
	StrictFIFO bool
	Now        time.Time
}

// Start is when a waiting job is expected to start.
type Start struct {
	// At is the time; zero when Unknown.
	At time.Time
	// After are the running jobs whose end it waits for, the last to end
	// last (at most three).
	After []Running
	// Unknown names why there is no time: the jobs whose end can't be
	// told and whose quota it needs, or that it never fits.
	Unknown string
}

// Known: At is a time.
func (s Start) Known() bool { return !s.At.IsZero() }

// Forecast plays p forward: running jobs give their quota back at their
// expected end, waiting jobs are admitted in Kueue's order when they fit
// (the fit rules of Assign), until every waiting job has started or no
// known end is left. What it cannot foresee: preemption (by a job of
// higher priority that arrives later, or of a running one by a waiting
// one), the cohort's lending changing, fair sharing and topology. Pure:
// the same plan gives the same starts.
func Forecast(p Plan) map[string]Start {
	l := newLedger(p.Queue)
	ends := slices.Clone(p.Running)
	var unknown []string
	for i := len(ends) - 1; i >= 0; i-- {
		if ends[i].From == "" {
			unknown = append(unknown, ends[i].Job)
			ends = slices.Delete(ends, i, i+1)
		}
	}
	byEnd := func(a, b Running) int { return cmp.Or(a.End.Compare(b.End), cmp.Compare(a.Job, b.Job)) }
	slices.SortFunc(ends, byEnd)
	slices.Sort(unknown)
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
				unknown = append(unknown, w.Job)
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

// lastThree are the latest three of released, the last to end last.
func lastThree(released []Running) []Running {
	return slices.Clone(released[max(0, len(released)-3):])
}

// unknownWhy names the jobs whose end can't be told.
func unknownWhy(jobs []string) string {
	jobs = slices.Sorted(slices.Values(jobs))
	if len(jobs) == 0 {
		return "it does not fit even once every running job has ended"
	}
	if len(jobs) > 3 {
		return fmt.Sprintf("it waits for %s and %d other jobs whose end can't be told (no time left reported, no progress, no history of their runtime, no maximum execution time)", strings.Join(jobs[:3], ", "), len(jobs)-3)
	}
	return "it waits for " + strings.Join(jobs, ", ") + ", whose end can't be told (no time left reported, no progress, no history of its runtime, no maximum execution time)"
}
