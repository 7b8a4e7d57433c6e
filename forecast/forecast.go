package forecast

import (
	"cmp"
	"container/heap"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
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
	// Why its end can't be told, when it can't.
	Why string
}

// Waiting is a job waiting in the ClusterQueue.
type Waiting struct {
	Job   string
	Roles []podsets.Role
	// Runs is how long it is expected to run once admitted, From how that
	// is known; From "" when it is not.
	Runs time.Duration
	From string
	// Why its run time can't be told, when it can't.
	Why string
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
//
// Near-linear in the queue: waiting jobs of one shape (lines) are tried
// once per shape between two releases, not once each. Between releases
// quota is only taken, never given back, so a shape that did not fit
// does not fit again before the next release, and the jobs behind it in
// its line would fail the same way; a line's head is the only one of its
// jobs worth trying. The work is then about (waiting jobs + releases) ×
// shapes, where replaying every job at every release was waiting jobs².
func Forecast(p Plan) map[string]Start {
	l := NewLedger(p.Queue)
	ends := &endQueue{}
	var unknown []Running
	for _, r := range p.Running {
		if r.From == "" {
			unknown = append(unknown, r)
			continue
		}
		heap.Push(ends, r)
	}
	out := make(map[string]Start, len(p.Waiting))
	lines := linesOf(p.Waiting)
	now, released := p.Now, []Running(nil)
	left := len(p.Waiting)
	for {
		// One round: every line with jobs left, its head first in Kueue's
		// order.
		round := &headQueue{}
		for _, ln := range lines {
			if ln.next < len(ln.jobs) {
				round.lines = append(round.lines, ln)
			}
		}
		heap.Init(round)
		for round.Len() > 0 {
			ln := round.lines[0]
			w := p.Waiting[ln.jobs[ln.next]]
			try := l.clone()
			if a, booked := assignUsage(try, w.Roles, ln.usage, p.Queue); a.Fits() {
				l = try
				out[w.Job] = Start{At: now, After: lastThree(released)}
				ln.next++
				left--
				if w.From == "" {
					unknown = append(unknown, Running{Job: w.Job, Why: w.Why})
				} else {
					heap.Push(ends, Running{Job: w.Job, End: now.Add(w.Runs), From: w.From, Uses: booked})
				}
				if ln.next < len(ln.jobs) {
					heap.Fix(round, 0)
				} else {
					heap.Pop(round)
				}
				continue
			}
			if p.StrictFIFO {
				break
			}
			heap.Pop(round)
		}
		if left == 0 {
			return out
		}
		if ends.Len() == 0 {
			why := unknownWhy(unknown)
			for _, ln := range lines {
				for _, i := range ln.jobs[ln.next:] {
					out[p.Waiting[i].Job] = Start{Unknown: why}
				}
			}
			return out
		}
		next := heap.Pop(ends).(Running)
		if next.End.After(now) {
			now = next.End
		}
		for f, rl := range next.Uses {
			l.give(f, rl)
		}
		released = append(released, next)
	}
}

// line is the waiting jobs of one shape, by their index in Kueue's order;
// next is the first not yet started; usage is the shape's, computed once.
type line struct {
	jobs  []int
	next  int
	usage []quota.RoleUsage
}

// linesOf groups waiting by shape: what the fit reads of a job's roles
// (each role's requests in total, its nodeSelector and tolerations).
func linesOf(waiting []Waiting) []*line {
	byShape := map[string]*line{}
	var out []*line
	for i, w := range waiting {
		usage := quota.Usage(w.Roles)
		key := shapeKey(w.Roles, usage)
		ln, ok := byShape[key]
		if !ok {
			ln = &line{usage: usage}
			byShape[key] = ln
			out = append(out, ln)
		}
		ln.jobs = append(ln.jobs, i)
	}
	return out
}

// shapeKey is what assignOn reads of roles, as a string: two jobs with the
// same key fit, or not, alike.
func shapeKey(roles []podsets.Role, usage []quota.RoleUsage) string {
	var b strings.Builder
	for i, u := range usage {
		b.WriteString("|")
		for _, r := range slices.Sorted(maps.Keys(u.Total)) {
			q := u.Total[r]
			fmt.Fprintf(&b, "%s=%s,", r, q.String())
		}
		spec := &roles[i].Template.Spec
		for _, k := range slices.Sorted(maps.Keys(spec.NodeSelector)) {
			fmt.Fprintf(&b, "ns:%s=%s,", k, spec.NodeSelector[k])
		}
		for _, t := range spec.Tolerations {
			fmt.Fprintf(&b, "t:%s/%s/%s/%s,", t.Key, t.Operator, t.Value, t.Effect)
		}
	}
	return b.String()
}

// headQueue orders a round's lines by their head's place in Kueue's order.
type headQueue struct{ lines []*line }

func (q *headQueue) Len() int { return len(q.lines) }
func (q *headQueue) Less(i, j int) bool {
	return q.lines[i].jobs[q.lines[i].next] < q.lines[j].jobs[q.lines[j].next]
}
func (q *headQueue) Swap(i, j int) { q.lines[i], q.lines[j] = q.lines[j], q.lines[i] }
func (q *headQueue) Push(x any)    { q.lines = append(q.lines, x.(*line)) }
func (q *headQueue) Pop() any {
	last := q.lines[len(q.lines)-1]
	q.lines = q.lines[:len(q.lines)-1]
	return last
}

// endQueue is the jobs with a known end, the first to end first (by name
// among equals: the same plan, the same starts).
type endQueue []Running

func (q endQueue) Len() int { return len(q) }
func (q endQueue) Less(i, j int) bool {
	return cmp.Or(q[i].End.Compare(q[j].End), cmp.Compare(q[i].Job, q[j].Job)) < 0
}
func (q endQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *endQueue) Push(x any)   { *q = append(*q, x.(Running)) }
func (q *endQueue) Pop() any {
	old := *q
	last := old[len(old)-1]
	*q = old[:len(old)-1]
	return last
}

// lastThree are the latest three of released, the last to end last.
func lastThree(released []Running) []Running {
	return slices.Clone(released[max(0, len(released)-3):])
}

// unknownWhy names the jobs whose end can't be told, and why, the jobs
// of one reason together.
func unknownWhy(jobs []Running) string {
	if len(jobs) == 0 {
		return "it does not fit even once every running job has ended"
	}
	byWhy := map[string][]string{}
	for _, r := range jobs {
		byWhy[r.Why] = append(byWhy[r.Why], r.Job)
	}
	var parts []string
	for _, why := range slices.Sorted(maps.Keys(byWhy)) {
		names := slices.Sorted(slices.Values(byWhy[why]))
		said := strings.Join(names, ", ")
		if len(names) > 3 {
			said = fmt.Sprintf("%s and %d other jobs", strings.Join(names[:3], ", "), len(names)-3)
		}
		if why == "" {
			why = "no way to tell it"
		}
		parts = append(parts, said+" ("+why+")")
	}
	if len(parts) == 1 {
		said, why, _ := strings.Cut(parts[0], " (")
		return "it waits for " + said + ", whose end can't be told (" + why
	}
	return "it waits for jobs whose end can't be told: " + strings.Join(parts, "; ")
}
