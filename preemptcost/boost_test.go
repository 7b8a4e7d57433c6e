package preemptcost

import (
	"testing"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/google/go-cmp/cmp"
)

func TestOf(t *testing.T) {
	p := Policy{
		Progress:    &ProgressPart{Points: 1000, StepPercent: 10},
		Preemptions: &PreemptionsPart{Points: 300, Every: 2, MaxPoints: 600},
		TimeLeft:    &TimeLeftPart{Points: 50, UnderSeconds: 600},
	}
	// Two hours in: the progress reported is credited in full.
	twoHours := int64(7200)
	for name, tc := range map[string]struct {
		p    Policy
		s    Signals
		want Boost
	}{
		"nothing known":                  {p: p, want: Boost{}},
		"training at 10%":                {p: p, s: Signals{Training: true, RunSeconds: &twoHours, ProgressPercent: pct(10)}, want: Boost{Total: 100, Progress: 100}},
		"training at 19%: the same step": {p: p, s: Signals{Training: true, RunSeconds: &twoHours, ProgressPercent: pct(19)}, want: Boost{Total: 100, Progress: 100}},
		"training at 90%":                {p: p, s: Signals{Training: true, RunSeconds: &twoHours, ProgressPercent: pct(90)}, want: Boost{Total: 900, Progress: 900}},
		"training at 100%":               {p: p, s: Signals{Training: true, RunSeconds: &twoHours, ProgressPercent: pct(100)}, want: Boost{Total: 1000, Progress: 1000}},
		"progress claimed beyond 100%":   {p: p, s: Signals{Training: true, RunSeconds: &twoHours, ProgressPercent: pct(250)}, want: Boost{Total: 1000, Progress: 1000}},
		"progress claimed below 0%":      {p: p, s: Signals{Training: true, RunSeconds: &twoHours, ProgressPercent: pct(-5)}, want: Boost{}},
		"in the initializer wave: no progress boost, whatever it claims": {p: p, s: Signals{ProgressPercent: pct(90), RemainingSeconds: pct(10)}, want: Boost{}},
		"preempted once: below every":                                    {p: p, s: Signals{Preemptions: 1, RunSeconds: &twoHours}, want: Boost{}},
		"preempted twice, running":                                       {p: p, s: Signals{Preemptions: 2, RunSeconds: &twoHours}, want: Boost{Total: 300, Preemptions: 300}},
		"preempted 9 times: capped":                                      {p: p, s: Signals{Preemptions: 9, RunSeconds: &twoHours}, want: Boost{Total: 600, Preemptions: 600}},
		"little time left, run long":                                     {p: p, s: Signals{Training: true, RunSeconds: &twoHours, RemainingSeconds: pct(599)}, want: Boost{Total: 50, TimeLeft: 50}},
		"time left at the threshold":                                     {p: p, s: Signals{Training: true, RunSeconds: &twoHours, RemainingSeconds: pct(600)}, want: Boost{}},
		"10 s left at the first report":                                  {p: p, s: Signals{Training: true, RunSeconds: ptrTo(int64(30)), RemainingSeconds: pct(10)}, want: Boost{}},
		"little time left, run just as long":                             {p: p, s: Signals{Training: true, RunSeconds: ptrTo(int64(600)), RemainingSeconds: pct(10)}, want: Boost{Total: 50, TimeLeft: 50}},
		// Pending (preempted, queued again): no part counts, whatever the
		// signals; the job keeps its place by its creation time.
		"pending, preempted 9 times, 95% done": {p: p, s: Signals{Training: true, Preemptions: 9, ProgressPercent: pct(95), RemainingSeconds: pct(30)}, want: Boost{}},
		"everything": {p: p, s: Signals{Training: true, RunSeconds: &twoHours, ProgressPercent: pct(95), RemainingSeconds: pct(30), Preemptions: 3},
			want: Boost{Total: 1250, Progress: 900, Preemptions: 300, TimeLeft: 50}},
		"no policy part: nothing": {s: Signals{Training: true, RunSeconds: &twoHours, ProgressPercent: pct(95), RemainingSeconds: pct(30), Preemptions: 3}, want: Boost{}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Of(tc.p, tc.s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// However often progress is reported, a job's boost takes at most
// Steps()+1 values in order (the bound on the Workload writes).
func TestABoostChangesAtMostOncePerStep(t *testing.T) {
	p := Policy{Progress: &ProgressPart{Points: 1000, StepPercent: 10}, Preemptions: &PreemptionsPart{Points: 100, Every: 1, MaxPoints: 300},
		TimeLeft: &TimeLeftPart{Points: 10, UnderSeconds: 100}}
	changes := 0
	last := Of(p, Signals{})
	for done := int32(0); done <= 100; done++ {
		preemptions := done / 20 // preempted now and then along the way
		run := int64(7200)
		s := Signals{Training: true, RunSeconds: &run, ProgressPercent: pct(done), RemainingSeconds: pct(1000 - 10*done), Preemptions: preemptions}
		for range 5 { // the same report, again
			if b := Of(p, s); b != last {
				changes++
				last = b
			}
		}
	}
	if limit := p.Steps(); int32(changes) > limit {
		t.Errorf("%d changes of the boost, want at most %d", changes, limit)
	}
}

func TestPreemptions(t *testing.T) {
	wl := &kueue.Workload{}
	if got := Preemptions(wl); got != 0 {
		t.Errorf("no stats: %d", got)
	}
	wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{
		{Reason: kueue.WorkloadEvictedByPreemption, UnderlyingCause: "InClusterQueue", Count: 2},
		{Reason: kueue.WorkloadEvictedByPreemption, UnderlyingCause: "InCohortReclamation", Count: 1},
		{Reason: kueue.WorkloadEvictedByPodsReadyTimeout, Count: 4},
	}}
	if got := Preemptions(wl); got != 3 {
		t.Errorf("%d preemptions, want 3 (every cause of preemption, no other eviction)", got)
	}
}

// A minimum run time boosts a job from its admission for its seconds, and
// says when the boost will change by itself, so the controller wakes the
// job then and never otherwise.
func TestMinRunTimeBoostsAJobJustAdmittedAndSaysWhenItEnds(t *testing.T) {
	p := Policy{MinRunTime: &MinRunTimePart{Points: 300, Seconds: 120}}
	secs := func(n int64) *int64 { return &n }
	for name, tc := range map[string]struct {
		run        *int64
		boost      int32
		nextChange int64
	}{
		"not admitted":        {},
		"admitted just now":   {run: secs(0), boost: 300, nextChange: 120},
		"a minute in":         {run: secs(60), boost: 300, nextChange: 60},
		"its time up":         {run: secs(120), boost: 0},
		"long ago":            {run: secs(86400), boost: 0},
		"a clock that jumped": {run: secs(-5), boost: 0},
	} {
		t.Run(name, func(t *testing.T) {
			s := Signals{RunSeconds: tc.run}
			if got := Of(p, s); got.MinRunTime != tc.boost || got.Total != tc.boost {
				t.Errorf("boost %+v, want %d", got, tc.boost)
			}
			if got := NextChange(p, s); got != tc.nextChange {
				t.Errorf("NextChange = %d, want %d", got, tc.nextChange)
			}
		})
	}
	if got := NextChange(Policy{Progress: &ProgressPart{Points: 10, StepPercent: 10}}, Signals{RunSeconds: secs(1)}); got != 0 {
		t.Errorf("a policy without a minimum run time changes with time in %d s", got)
	}
}

// The checkpoint part counts the work a preemption would lose: since the
// checkpoint a job reports, else since the last interval it declares,
// else since its start; in steps of its interval, at most the part's
// points; and it says when time alone moves it next.
func TestCheckpointCountsTheWorkAPreemptionWouldLose(t *testing.T) {
	p := Policy{Checkpoint: &CheckpointPart{Points: 1000, StepPercent: 10, IntervalSeconds: 1800}}
	secs := func(n int64) *int64 { return &n }
	for name, tc := range map[string]struct {
		s          Signals
		boost      int32
		lost       int64
		nextChange int64
	}{
		"checkpointed a minute ago":              {s: Signals{Training: true, RunSeconds: secs(3600), CheckpointAgo: secs(60)}, boost: 0, lost: 60, nextChange: 120},
		"checkpointed 25 minutes ago":            {s: Signals{Training: true, RunSeconds: secs(3600), CheckpointAgo: secs(1500)}, boost: 800, lost: 1500, nextChange: 120},
		"a whole interval and more lost":         {s: Signals{Training: true, RunSeconds: secs(7200), CheckpointAgo: secs(3000)}, boost: 1000, lost: 3000},
		"checkpointed before its restart":        {s: Signals{Training: true, RunSeconds: secs(400), CheckpointAgo: secs(5000)}, boost: 200, lost: 400, nextChange: 140},
		"declares 10 minutes, 1000 s in":         {s: Signals{Training: true, RunSeconds: secs(1000), CheckpointInterval: secs(600)}, boost: 600, lost: 400, nextChange: 20},
		"declares 10 minutes, at the checkpoint": {s: Signals{Training: true, RunSeconds: secs(1200), CheckpointInterval: secs(600)}, boost: 0, lost: 0, nextChange: 60},
		"nothing known, 15 minutes in":           {s: Signals{Training: true, RunSeconds: secs(900)}, boost: 500, lost: 900, nextChange: 180},
		"in its initializer wave":                {s: Signals{RunSeconds: secs(3600), CheckpointAgo: secs(3000)}},
		"not admitted":                           {s: Signals{Training: true, CheckpointAgo: secs(3000)}},
	} {
		t.Run(name, func(t *testing.T) {
			b := Of(p, tc.s)
			if b.Checkpoint != tc.boost || b.Total != tc.boost || b.LostSeconds != tc.lost {
				t.Errorf("boost %+v, want %d for %d s lost", b, tc.boost, tc.lost)
			}
			if got := NextChange(p, tc.s); got != tc.nextChange {
				t.Errorf("NextChange = %d, want %d", got, tc.nextChange)
			}
		})
	}
}

// The example: A at 90% checkpointed a minute ago, B at 30%
// checkpointed 50 minutes ago. Counting progress protects A and gives B
// up; counting the work lost protects B, which would lose 50 minutes.
func TestTheWorkLostOutweighsProgressAsThePolicySays(t *testing.T) {
	p := Policy{Progress: &ProgressPart{Points: 300, StepPercent: 10}, Checkpoint: &CheckpointPart{Points: 1000, StepPercent: 10, IntervalSeconds: 3600}}
	run, a, b := int64(7200), int64(60), int64(3000)
	boostA := Of(p, Signals{Training: true, ProgressPercent: ptrTo(int32(90)), RunSeconds: &run, CheckpointAgo: &a})
	boostB := Of(p, Signals{Training: true, ProgressPercent: ptrTo(int32(30)), RunSeconds: &run, CheckpointAgo: &b})
	if boostA.Total >= boostB.Total {
		t.Errorf("A (90%%, a minute lost) %+v, B (30%%, 50 minutes lost) %+v: B must be the costlier", boostA, boostB)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Progress is self-reported, so it is credited no faster than the policy's
// rate (default 100% an hour) since the job's admission: a job that claims
// 100% at its first report gets what it could have done in the time it
// ran, and the boost says when the rate lets it rise next.
func TestProgressIsCreditedNoFasterThanTheRate(t *testing.T) {
	byDefault := Policy{Progress: &ProgressPart{Points: 1000, StepPercent: 10}}
	fast := Policy{Progress: &ProgressPart{Points: 1000, StepPercent: 10, MaxPercentPerHour: 600}}
	secs := func(n int64) *int64 { return &n }
	for name, tc := range map[string]struct {
		p          Policy
		reported   int32
		run        *int64
		progress   int32
		nextChange int64
	}{
		"100% claimed at the first report, a minute in": {p: byDefault, reported: 100, run: secs(60), progress: 0, nextChange: 300},
		"100% claimed 6 minutes in: one step":           {p: byDefault, reported: 100, run: secs(360), progress: 100, nextChange: 360},
		"100% claimed 59 minutes in":                    {p: byDefault, reported: 100, run: secs(3540), progress: 900, nextChange: 60},
		"100% after an hour: in full":                   {p: byDefault, reported: 100, run: secs(3600), progress: 1000},
		"30% reported 3 hours in: the report holds it":  {p: byDefault, reported: 30, run: secs(10800), progress: 300},
		"55% reported 20 minutes in: the rate holds it": {p: byDefault, reported: 55, run: secs(1200), progress: 300, nextChange: 240},
		"a faster rate, 5 minutes in":                   {p: fast, reported: 90, run: secs(300), progress: 500, nextChange: 60},
		"not admitted: nothing credited":                {p: byDefault, reported: 100},
		"a clock that jumped":                           {p: byDefault, reported: 100, run: secs(-5)},
	} {
		t.Run(name, func(t *testing.T) {
			s := Signals{Training: true, ProgressPercent: pct(tc.reported), RunSeconds: tc.run}
			if got := Of(tc.p, s); got.Progress != tc.progress || got.Total != tc.progress {
				t.Errorf("boost %+v, want progress %d", got, tc.progress)
			}
			if got := NextChange(tc.p, s); got != tc.nextChange {
				t.Errorf("NextChange = %d, want %d", got, tc.nextChange)
			}
		})
	}
}
