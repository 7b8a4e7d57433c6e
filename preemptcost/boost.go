package preemptcost

import kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

// Signals are what is known of one job for its boost.
type Signals struct {
	// Training: the job's trainer phase began (its trainer nodes were
	// started, no initializer left to run). Progress and time left count
	// only then: a job in its initializer wave has lost nothing of
	// training.
	Training bool
	// ProgressPercent and RemainingSeconds, as Trainer's status reports
	// them (v2.2+); nil when not reported.
	ProgressPercent  *int32
	RemainingSeconds *int32
	// Preemptions is how often Kueue evicted the job's Workload for
	// preemption.
	Preemptions int32
	// RunSeconds is how long ago the job's Workload was last admitted;
	// nil while it is not.
	RunSeconds *int64
}

// Boost is a job's boost under a policy, and its parts.
type Boost struct {
	Total       int32 `json:"total"`
	Progress    int32 `json:"progress"`
	Preemptions int32 `json:"preemptions"`
	TimeLeft    int32 `json:"timeLeft"`
	// MinRunTime is omitted when 0, so the marks written before the part
	// existed still read as the same boost.
	MinRunTime int32 `json:"minRunTime,omitempty"`
}

// Of is the boost of a job with signals s under a valid policy p. Each part
// is a whole number of steps, so it changes only when a step is crossed.
func Of(p Policy, s Signals) Boost {
	var b Boost
	if pr := p.Progress; pr != nil && s.Training && s.ProgressPercent != nil {
		pct := min(max(*s.ProgressPercent, 0), 100)
		steps := 100 / pr.StepPercent
		step := min(pct/pr.StepPercent, steps)
		b.Progress = int32(int64(pr.Points) * int64(step) / int64(steps))
	}
	if pe := p.Preemptions; pe != nil && s.Preemptions > 0 {
		b.Preemptions = int32(min(int64(pe.Points)*int64(s.Preemptions/pe.Every), int64(pe.MaxPoints)))
	}
	if tl := p.TimeLeft; tl != nil && s.Training && s.RemainingSeconds != nil && *s.RemainingSeconds >= 0 && *s.RemainingSeconds < tl.UnderSeconds {
		b.TimeLeft = tl.Points
	}
	if mr := p.MinRunTime; mr != nil && s.RunSeconds != nil && *s.RunSeconds >= 0 && *s.RunSeconds < int64(mr.Seconds) {
		b.MinRunTime = mr.Points
	}
	// Validate bounds the sum by MaxInt32.
	b.Total = b.Progress + b.Preemptions + b.TimeLeft + b.MinRunTime
	return b
}

// NextChange is in how many seconds the boost of a job with signals s
// under p changes with time alone (its minimum run time up); 0 when no
// part changes by itself. The controller wakes the job then, and not
// before: no timer runs for a job whose boost can't change.
func NextChange(p Policy, s Signals) int64 {
	if mr := p.MinRunTime; mr != nil && mr.Points > 0 && s.RunSeconds != nil && *s.RunSeconds >= 0 && *s.RunSeconds < int64(mr.Seconds) {
		return int64(mr.Seconds) - *s.RunSeconds
	}
	return 0
}

// Preemptions counts wl's evictions for preemption (its
// status.schedulingStats): what the policy's preemption part counts.
func Preemptions(wl *kueue.Workload) int32 {
	if wl.Status.SchedulingStats == nil {
		return 0
	}
	var n int32
	for _, e := range wl.Status.SchedulingStats.Evictions {
		if e.Reason == kueue.WorkloadEvictedByPreemption {
			n += e.Count
		}
	}
	return n
}
