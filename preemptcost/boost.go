package preemptcost

import (
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

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
	// CheckpointAgo is how long ago the job reports it last checkpointed
	// (the policy's metric); nil when it reports nothing usable.
	CheckpointAgo *int64
	// CheckpointInterval is the interval, in seconds, the job declares it
	// checkpoints at; nil when it declares none.
	CheckpointInterval *int64
}

// Boost is a job's boost under a policy, and its parts.
type Boost struct {
	Total       int32 `json:"total"`
	Progress    int32 `json:"progress"`
	Preemptions int32 `json:"preemptions"`
	TimeLeft    int32 `json:"timeLeft"`
	// MinRunTime and Checkpoint are omitted when 0, so the marks written
	// before the parts existed still read as the same boost.
	MinRunTime int32 `json:"minRunTime,omitempty"`
	Checkpoint int32 `json:"checkpoint,omitempty"`
	// LostSeconds is the work a preemption would lose now, as the
	// checkpoint part counted it; not part of the boost.
	LostSeconds int64 `json:"-"`
}

// Of is the boost of a job with signals s under a valid policy p. Each part
// is a whole number of steps, so it changes only when a step is crossed.
//
// Every part counts only while the job runs (its Workload admitted): a
// boost is what losing a running job would cost. A pending job's boost
// is 0, so it never outranks a job of its own priority class, and the
// preemption it waits to make is never one its boost made possible: one
// arrival preempts one job, never a cascade (a preempted job boosted for
// its preemptions would preempt a peer, which, boosted in turn, would
// preempt the next). What anti-starvation keeps: Kueue orders a job
// preempted within its ClusterQueue by its creation time, so it is
// admitted before equal jobs queued after it, and once it runs again the
// preemptions part protects it from being preempted again.
func Of(p Policy, s Signals) Boost {
	var b Boost
	if s.RunSeconds == nil || *s.RunSeconds < 0 {
		return b
	}
	for _, pt := range p.parts() {
		// Validate bounds the sum by MaxInt32.
		b.Total += pt.add(s, &b)
	}
	return b
}

// timeLeftCredited: the job reports less than the part's UnderSeconds
// left, and that claim is believed (trainjob.TimeLeftBelieved, the trust
// rule of time left the expected end shares, as maxPercentPerHour is
// progress's): "under UnderSeconds left" is believed once the job has run
// UnderSeconds since its latest admission.
func timeLeftCredited(tl TimeLeftPart, s Signals) bool {
	if !s.Training || s.RemainingSeconds == nil || *s.RemainingSeconds < 0 || *s.RemainingSeconds >= tl.UnderSeconds || s.RunSeconds == nil {
		return false
	}
	under := time.Duration(tl.UnderSeconds) * time.Second
	return trainjob.TimeLeftBelieved(time.Duration(*s.RunSeconds)*time.Second, under, under)
}

// lostWork is the work, in seconds, a preemption of a running job would
// lose now, and the checkpoint interval it is measured against: since
// the checkpoint it reports (no earlier than its start), else since the
// last whole interval it declares, else since its start.
func lostWork(cp CheckpointPart, s Signals) (lost, interval int64, ok bool) {
	if s.RunSeconds == nil || *s.RunSeconds < 0 {
		return 0, 0, false
	}
	run := *s.RunSeconds
	interval = int64(cp.IntervalSeconds)
	if s.CheckpointInterval != nil && *s.CheckpointInterval > 0 {
		interval = *s.CheckpointInterval
	}
	switch {
	case s.CheckpointAgo != nil && *s.CheckpointAgo >= 0:
		return min(*s.CheckpointAgo, run), interval, true
	case s.CheckpointInterval != nil && *s.CheckpointInterval > 0:
		return run % interval, interval, true
	}
	return run, interval, true
}

// NextChange is in how many seconds the boost of a job with signals s
// under p changes with time alone (its minimum run time up, a checkpoint
// step, progress reported ahead of the rate it is credited at); 0 when no
// part changes by itself. The controller wakes the job then, and not
// before: no timer runs for a job whose boost can't change.
func NextChange(p Policy, s Signals) int64 {
	if s.RunSeconds == nil || *s.RunSeconds < 0 {
		return 0 // pending: no part counts until it runs
	}
	var next int64
	for _, pt := range p.parts() {
		if n := pt.nextChange(s); n > 0 && (next == 0 || n < next) {
			next = n
		}
	}
	return next
}

// progressChange is in how many seconds the credited progress of a job
// that reports reported after run seconds reaches its next step; 0 when
// the report, not the rate, holds it back.
func progressChange(pr ProgressPart, reported int32, run int64) int64 {
	if run < 0 {
		return 0
	}
	next := int64(pr.Credited(reported, run)/pr.StepPercent+1) * int64(pr.StepPercent)
	if next > int64(min(max(reported, 0), 100)) {
		return 0
	}
	at := (next*3600 + pr.Rate() - 1) / pr.Rate()
	return at - run
}

// checkpointChange is in how many seconds the checkpoint part moves by
// time alone: at its next step, or, for a declared interval, at the next
// checkpoint (back to 0); 0 once it is at its top and only a report can
// move it.
func checkpointChange(cp CheckpointPart, s Signals) int64 {
	lost, interval, ok := lostWork(cp, s)
	if !ok {
		return 0
	}
	step := cp.StepSeconds(interval)
	var next int64
	if lost/step < int64(100/cp.StepPercent) {
		next = (lost/step+1)*step - lost
	}
	if s.CheckpointAgo == nil && s.CheckpointInterval != nil && *s.CheckpointInterval > 0 {
		if reset := interval - lost; next == 0 || reset < next {
			next = reset
		}
	}
	return next
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
