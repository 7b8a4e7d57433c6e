package preemptcost

import (
	"testing"

	"k8s.io/utils/ptr"
)

// Each part, at the most a job can earn of it, adds exactly what it says
// is its most: the bound Validate sums to keep the boost within an int32.
// And a policy lists every part it sets, once.
func TestEveryPartAddsAtMostWhatItSays(t *testing.T) {
	maxed := Signals{Training: true, ProgressPercent: ptr.To[int32](100), RemainingSeconds: ptr.To[int32](0),
		Preemptions: 1000, RunSeconds: ptr.To[int64](0), CheckpointAgo: ptr.To[int64](1 << 20)}
	longRun := maxed
	longRun.RunSeconds = ptr.To[int64](1 << 20)
	for name, tc := range map[string]struct {
		part part
		s    Signals
	}{
		"progress":    {ProgressPart{Points: 1000, StepPercent: 10}, longRun},
		"preemptions": {PreemptionsPart{Points: 300, Every: 1, MaxPoints: 1000}, maxed},
		"timeLeft":    {TimeLeftPart{Points: 700, UnderSeconds: 60}, longRun},
		"checkpoint":  {CheckpointPart{Points: 900, StepPercent: 25, IntervalSeconds: 3600}, longRun},
		"minRunTime":  {MinRunTimePart{Points: 500, Seconds: 600}, maxed},
	} {
		t.Run(name, func(t *testing.T) {
			if err := tc.part.validate(); err != nil {
				t.Fatal(err)
			}
			var b Boost
			if got := tc.part.add(tc.s, &b); int64(got) != tc.part.most() {
				t.Errorf("adds %d at its most, says %d", got, tc.part.most())
			}
			if got := tc.part.add(tc.s, &b); b.Progress+b.Preemptions+b.TimeLeft+b.Checkpoint+b.MinRunTime != got {
				t.Errorf("adds %d, but sets %+v on the boost", got, b)
			}
		})
	}
	all := Policy{Progress: &ProgressPart{}, Preemptions: &PreemptionsPart{}, TimeLeft: &TimeLeftPart{}, Checkpoint: &CheckpointPart{}, MinRunTime: &MinRunTimePart{}}
	if n := len(all.parts()); n != 5 {
		t.Errorf("a policy with every part lists %d parts, want 5", n)
	}
	if n := len(Policy{TakeOver: true}.parts()); n != 0 {
		t.Errorf("a policy with no part lists %d", n)
	}
}
