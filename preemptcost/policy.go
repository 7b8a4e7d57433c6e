// Package preemptcost is the arithmetic of a ClusterQueue's preemption-cost
// policy: how much a TrainJob's Workload's priority is boosted (Kueue's
// kueue.x-k8s.io/priority-boost, KEP-7990) for what losing it would cost —
// training progress, and the preemptions it already suffered. It takes
// data and returns data: no client, no clock.
//
// Every part moves in steps, so a job's boost takes a bounded number of
// values over its life and the Workload is written at most that many
// times, whatever the rate of progress reports (KEP-7990 leaves
// anti-flapping to the controller).
package preemptcost

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Policy is what a batch admin sets on a ClusterQueue, as the JSON value of
// the annotation names.PreemptionCostAnnotation. Every part is optional and
// off when absent; a policy with no part boosts nothing.
type Policy struct {
	// Progress boosts a job in its trainer phase by the share of training
	// it reports done (Trainer v2.2+ status.trainerStatus), in steps.
	Progress *ProgressPart `json:"progress,omitempty"`
	// Preemptions boosts a job for the preemptions it suffered
	// (anti-starvation).
	Preemptions *PreemptionsPart `json:"preemptions,omitempty"`
	// TimeLeft boosts a job in its trainer phase that reports less time
	// left than a threshold.
	TimeLeft *TimeLeftPart `json:"timeLeft,omitempty"`
	// MinRunTime boosts a job for a while after each start, so an arrival
	// of its class can't preempt it before it can reach its first
	// checkpoint (kueue#9596).
	MinRunTime *MinRunTimePart `json:"minRunTime,omitempty"`
	// TakeOver: a boost someone else set on a Workload of this
	// ClusterQueue is replaced by ours. Without it, it is left alone.
	TakeOver bool `json:"takeOver,omitempty"`
}

// ProgressPart: Points at 100%, counted every StepPercent.
type ProgressPart struct {
	Points      int32 `json:"points"`
	StepPercent int32 `json:"stepPercent"`
}

// PreemptionsPart: Points for every Every preemptions, up to MaxPoints.
type PreemptionsPart struct {
	Points    int32 `json:"points"`
	Every     int32 `json:"every"`
	MaxPoints int32 `json:"maxPoints"`
}

// TimeLeftPart: Points once less than UnderSeconds are reported left.
type TimeLeftPart struct {
	Points       int32 `json:"points"`
	UnderSeconds int32 `json:"underSeconds"`
}

// MinRunTimePart: Points while the job has run less than Seconds since it
// was last admitted.
type MinRunTimePart struct {
	Points  int32 `json:"points"`
	Seconds int32 `json:"seconds"`
}

// Error is a policy that can't be used, naming the field and the fix.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Parse reads and checks a policy. Unknown fields are refused: a misspelt
// part would otherwise be off without a word.
func Parse(value string) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, &Error{Field: "", Msg: fmt.Sprintf("not a policy (%v); the value is JSON, e.g. %s", err, Example)}
	}
	if dec.More() {
		return Policy{}, &Error{Msg: "more than one JSON value; the value is one object, e.g. " + Example}
	}
	return p, p.Validate()
}

// Example is a policy, as a batch admin would write it.
const Example = `{"progress":{"points":1000,"stepPercent":10},"preemptions":{"points":500,"every":1,"maxPoints":2000}}`

// Validate checks every part's bounds, and that the largest boost the
// policy can give fits the annotation's int32.
func (p Policy) Validate() error {
	nonNegative := func(field string, v int32) error {
		if v < 0 {
			return &Error{Field: field, Msg: fmt.Sprintf("%d is negative; points only raise a job's priority, from 0", v)}
		}
		return nil
	}
	var most int64
	if pr := p.Progress; pr != nil {
		if err := nonNegative("progress.points", pr.Points); err != nil {
			return err
		}
		if pr.StepPercent < 1 || pr.StepPercent > 100 {
			return &Error{Field: "progress.stepPercent", Msg: fmt.Sprintf("%d is not in 1..100: the boost changes every stepPercent of progress", pr.StepPercent)}
		}
		most += int64(pr.Points)
	}
	if pe := p.Preemptions; pe != nil {
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
		most += int64(pe.MaxPoints)
	}
	if tl := p.TimeLeft; tl != nil {
		if err := nonNegative("timeLeft.points", tl.Points); err != nil {
			return err
		}
		if tl.UnderSeconds < 1 {
			return &Error{Field: "timeLeft.underSeconds", Msg: fmt.Sprintf("%d is less than 1: the threshold is a number of seconds", tl.UnderSeconds)}
		}
		most += int64(tl.Points)
	}
	if mr := p.MinRunTime; mr != nil {
		if err := nonNegative("minRunTime.points", mr.Points); err != nil {
			return err
		}
		if mr.Seconds < 1 {
			return &Error{Field: "minRunTime.seconds", Msg: fmt.Sprintf("%d is less than 1: a job is boosted for that many seconds after each start", mr.Seconds)}
		}
		most += int64(mr.Points)
	}
	if most > math.MaxInt32 {
		return &Error{Field: "", Msg: fmt.Sprintf("the parts sum up to %d points, more than Kueue's priority-boost takes (%d, an int32): lower progress.points, preemptions.maxPoints, timeLeft.points or minRunTime.points", most, math.MaxInt32)}
	}
	return nil
}

// Steps is how many times a job's boost may change over its life under
// p: one per progress step, per preemption step up to the cap, the
// time-left threshold once, and the minimum run time twice per start
// (granted at admission, taken back when its time is up).
func (p Policy) Steps() int32 {
	var n int32
	if pr := p.Progress; pr != nil && pr.Points > 0 {
		n += 100 / pr.StepPercent
	}
	if pe := p.Preemptions; pe != nil && pe.Points > 0 {
		n += (pe.MaxPoints + pe.Points - 1) / pe.Points
	}
	if tl := p.TimeLeft; tl != nil && tl.Points > 0 {
		n++
	}
	if mr := p.MinRunTime; mr != nil && mr.Points > 0 {
		n += 2
	}
	return n
}
