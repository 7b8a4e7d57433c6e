package preemptcost

import "fmt"

// A part is one way a preemption costs, as a policy sets it. Each part is
// one type: it checks its own settings, says the most points it adds, adds
// its points to a running job's boost, says when those change by time
// alone, and bounds how many times they may change over a job's life (the
// writes it may cause). A new part is a type with these methods, a field
// of Policy and of Boost, and a line in Policy.parts.
type part interface {
	// validate checks the part's settings, naming its fields.
	validate() error
	// most is the most points the part adds.
	most() int64
	// add sets the part's points for a running job with signals s on b,
	// and returns them.
	add(s Signals, b *Boost) int32
	// nextChange is in how many seconds the part's points for a running
	// job change by time alone; 0 when they don't.
	nextChange(s Signals) int64
	// steps is how many times the part's points may change (see
	// Policy.Steps).
	steps() int32
}

// parts are the policy's parts that are set, in the order they are
// checked.
func (p Policy) parts() []part {
	var out []part
	if p.Progress != nil {
		out = append(out, *p.Progress)
	}
	if p.Preemptions != nil {
		out = append(out, *p.Preemptions)
	}
	if p.TimeLeft != nil {
		out = append(out, *p.TimeLeft)
	}
	if p.Checkpoint != nil {
		out = append(out, *p.Checkpoint)
	}
	if p.MinRunTime != nil {
		out = append(out, *p.MinRunTime)
	}
	return out
}

func nonNegative(field string, v int32) error {
	if v < 0 {
		return &Error{Field: field, Msg: fmt.Sprintf("%d is negative; points only raise a job's priority, from 0", v)}
	}
	return nil
}

// Progress: the share of training a job in its trainer phase reports
// done, credited no faster than the part's rate, in steps.

func (pr ProgressPart) validate() error {
	if err := nonNegative("progress.points", pr.Points); err != nil {
		return err
	}
	if pr.StepPercent < 1 || pr.StepPercent > 100 {
		return &Error{Field: "progress.stepPercent", Msg: fmt.Sprintf("%d is not in 1..100: the boost changes every stepPercent of progress", pr.StepPercent)}
	}
	if pr.MaxPercentPerHour < 0 {
		return &Error{Field: "progress.maxPercentPerHour", Msg: fmt.Sprintf("%d is negative: give the fastest progress, in percent per hour, a job is credited with (default %d)", pr.MaxPercentPerHour, DefaultMaxPercentPerHour)}
	}
	return nil
}

func (pr ProgressPart) most() int64 { return int64(pr.Points) }

func (pr ProgressPart) add(s Signals, b *Boost) int32 {
	if !s.Training || s.ProgressPercent == nil {
		return 0
	}
	pct := pr.Credited(*s.ProgressPercent, *s.RunSeconds)
	steps := 100 / pr.StepPercent
	step := min(pct/pr.StepPercent, steps)
	b.Progress = int32(int64(pr.Points) * int64(step) / int64(steps))
	return b.Progress
}

func (pr ProgressPart) nextChange(s Signals) int64 {
	if pr.Points <= 0 || !s.Training || s.ProgressPercent == nil {
		return 0
	}
	return progressChange(pr, *s.ProgressPercent, *s.RunSeconds)
}

func (pr ProgressPart) steps() int32 {
	if pr.Points <= 0 {
		return 0
	}
	return 100 / pr.StepPercent
}

// Preemptions: points for every Every preemptions the job suffered, up to
// the cap (anti-starvation once it runs again).

func (pe PreemptionsPart) validate() error {
	if err := nonNegative("preemptions.points", pe.Points); err != nil {
		return err
	}
	if err := nonNegative("preemptions.maxPoints", pe.MaxPoints); err != nil {
		return err
	}
	if pe.Every < 1 {
		return &Error{Field: "preemptions.every", Msg: fmt.Sprintf("%d is less than 1: points are given every that many preemptions", pe.Every)}
	}
	if pe.Points > 0 && pe.MaxPoints == 0 {
		return &Error{Field: "preemptions.maxPoints", Msg: "missing: the preemption part needs a cap, at least preemptions.points"}
	}
	return nil
}

func (pe PreemptionsPart) most() int64 { return int64(pe.MaxPoints) }

func (pe PreemptionsPart) add(s Signals, b *Boost) int32 {
	if s.Preemptions <= 0 {
		return 0
	}
	b.Preemptions = int32(min(int64(pe.Points)*int64(s.Preemptions/pe.Every), int64(pe.MaxPoints)))
	return b.Preemptions
}

func (pe PreemptionsPart) nextChange(Signals) int64 { return 0 }

func (pe PreemptionsPart) steps() int32 {
	if pe.Points <= 0 {
		return 0
	}
	return (pe.MaxPoints + pe.Points - 1) / pe.Points
}

// Time left: points once a job reports less than UnderSeconds left, and
// has run at least that long.

func (tl TimeLeftPart) validate() error {
	if err := nonNegative("timeLeft.points", tl.Points); err != nil {
		return err
	}
	if tl.UnderSeconds < 1 {
		return &Error{Field: "timeLeft.underSeconds", Msg: fmt.Sprintf("%d is less than 1: the threshold is a number of seconds", tl.UnderSeconds)}
	}
	return nil
}

func (tl TimeLeftPart) most() int64 { return int64(tl.Points) }

func (tl TimeLeftPart) add(s Signals, b *Boost) int32 {
	if !timeLeftCredited(tl, s) {
		return 0
	}
	b.TimeLeft = tl.Points
	return b.TimeLeft
}

func (tl TimeLeftPart) nextChange(s Signals) int64 {
	if tl.Points > 0 && s.Training && s.RemainingSeconds != nil && *s.RemainingSeconds >= 0 &&
		*s.RemainingSeconds < tl.UnderSeconds && *s.RunSeconds < int64(tl.UnderSeconds) {
		return int64(tl.UnderSeconds) - *s.RunSeconds
	}
	return 0
}

func (tl TimeLeftPart) steps() int32 {
	if tl.Points <= 0 {
		return 0
	}
	return 1
}

// Checkpoint: the work a preemption would lose, as a share of the
// checkpoint interval, in steps.

func (cp CheckpointPart) validate() error {
	if err := nonNegative("checkpoint.points", cp.Points); err != nil {
		return err
	}
	if cp.StepPercent < 1 || cp.StepPercent > 100 {
		return &Error{Field: "checkpoint.stepPercent", Msg: fmt.Sprintf("%d is not in 1..100: the boost changes every stepPercent of the checkpoint interval", cp.StepPercent)}
	}
	if int64(cp.IntervalSeconds)*int64(cp.StepPercent)/100 < MinCheckpointStepSeconds {
		return &Error{Field: "checkpoint.intervalSeconds", Msg: fmt.Sprintf("%d with steps of %d%% makes steps under %d s: give an interval of at least %d s, or larger steps", cp.IntervalSeconds, cp.StepPercent, MinCheckpointStepSeconds, MinCheckpointStepSeconds*100/int64(cp.StepPercent))}
	}
	if cp.Metric != "" && !IsCheckpointMetric(cp.Metric) {
		return &Error{Field: "checkpoint.metric", Msg: fmt.Sprintf("%q does not contain \"checkpoint\": name the metric the training reports its last checkpoint's Unix time under, e.g. %s", cp.Metric, DefaultCheckpointMetric)}
	}
	return nil
}

func (cp CheckpointPart) most() int64 { return int64(cp.Points) }

func (cp CheckpointPart) add(s Signals, b *Boost) int32 {
	if !s.Training {
		return 0
	}
	lost, interval, ok := lostWork(cp, s)
	if !ok {
		return 0
	}
	steps := int64(100 / cp.StepPercent)
	step := min(lost/cp.StepSeconds(interval), steps)
	b.Checkpoint = int32(int64(cp.Points) * step / steps)
	b.LostSeconds = lost
	return b.Checkpoint
}

func (cp CheckpointPart) nextChange(s Signals) int64 {
	if cp.Points <= 0 || !s.Training {
		return 0
	}
	return checkpointChange(cp, s)
}

func (cp CheckpointPart) steps() int32 {
	if cp.Points <= 0 {
		return 0
	}
	return 100/cp.StepPercent + 1
}

// Minimum run time: points for Seconds after each start.

func (mr MinRunTimePart) validate() error {
	if err := nonNegative("minRunTime.points", mr.Points); err != nil {
		return err
	}
	if mr.Seconds < 1 {
		return &Error{Field: "minRunTime.seconds", Msg: fmt.Sprintf("%d is less than 1: a job is boosted for that many seconds after each start", mr.Seconds)}
	}
	return nil
}

func (mr MinRunTimePart) most() int64 { return int64(mr.Points) }

func (mr MinRunTimePart) add(s Signals, b *Boost) int32 {
	if *s.RunSeconds >= int64(mr.Seconds) {
		return 0
	}
	b.MinRunTime = mr.Points
	return b.MinRunTime
}

func (mr MinRunTimePart) nextChange(s Signals) int64 {
	if mr.Points <= 0 || *s.RunSeconds >= int64(mr.Seconds) {
		return 0
	}
	return int64(mr.Seconds) - *s.RunSeconds
}

func (mr MinRunTimePart) steps() int32 {
	if mr.Points <= 0 {
		return 0
	}
	return 2
}
