// Package preemptcost is the arithmetic of a ClusterQueue's preemption-cost
// policy: how much a TrainJob's Workload's priority is boosted (Kueue's
// kueue.x-k8s.io/priority-boost, KEP-7990) for what losing it would cost —
// training progress, and the preemptions it already suffered — and of
// its preemption notice (notice.go): how long a preempted running job may
// run on to checkpoint, and what ends it. It takes data and returns data:
// no client, no clock.
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
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
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
	// Checkpoint boosts a job in its trainer phase by the work a
	// preemption would lose: the time since its last checkpoint, as a
	// share of its checkpoint interval, in steps.
	Checkpoint *CheckpointPart `json:"checkpoint,omitempty"`
	// MinRunTime boosts a job for a while after each start, so an arrival
	// of its class can't preempt it before it can reach its first
	// checkpoint (kueue#9596).
	MinRunTime *MinRunTimePart `json:"minRunTime,omitempty"`
	// Notice gives a running TrainJob that Kueue preempts (or drains) a
	// window to checkpoint before it is stopped (notice.go). Not a boost:
	// it changes when a victim stops, not which one Kueue picks.
	Notice *NoticePart `json:"notice,omitempty"`
	// TakeOver: a boost someone else set on a Workload of this
	// ClusterQueue is replaced by ours. Without it, it is left alone.
	TakeOver bool `json:"takeOver,omitempty"`
}

// ProgressPart: Points at 100%, counted every StepPercent. Progress is
// what the training reports of itself, so it is credited no faster than
// MaxPercentPerHour since the job's latest admission: a job that claims
// 100% at its first report gets what it could have done in the time it
// ran, not the part's points.
type ProgressPart struct {
	Points      int32 `json:"points"`
	StepPercent int32 `json:"stepPercent"`
	// MaxPercentPerHour is the fastest progress credited;
	// DefaultMaxPercentPerHour if 0.
	MaxPercentPerHour int32 `json:"maxPercentPerHour,omitempty"`
}

// DefaultMaxPercentPerHour: unless the policy says otherwise, a job is
// credited at most all its training in an hour of running. A job that
// really trains faster is cheap to preempt anyway.
const DefaultMaxPercentPerHour = 100

// Rate is the fastest progress credited, in percent per hour.
func (p ProgressPart) Rate() int64 {
	if p.MaxPercentPerHour == 0 {
		return DefaultMaxPercentPerHour
	}
	return int64(p.MaxPercentPerHour)
}

// Credited is the progress, in percent, a job that reports reported after
// running run seconds since its admission is credited with: the report,
// within 0..100, and no more than the part's rate allows.
func (p ProgressPart) Credited(reported int32, run int64) int32 {
	pct := int64(min(max(reported, 0), 100))
	return int32(min(pct, max(run, 0)*p.Rate()/3600))
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

// CheckpointPart: Points when a whole checkpoint interval of work would be
// lost, counted every StepPercent of the interval. The time of a job's
// last checkpoint is the Unix time (seconds) its training reports in
// status.trainerStatus.metrics under Metric (Trainer v2.2+); without such
// a report, a job that declares its checkpoint interval
// (names.CheckpointIntervalAnnotation) is taken to checkpoint every
// interval since its start; otherwise its work since its start is lost.
type CheckpointPart struct {
	Points      int32 `json:"points"`
	StepPercent int32 `json:"stepPercent"`
	// IntervalSeconds is the interval of a job that declares none.
	IntervalSeconds int32 `json:"intervalSeconds"`
	// Metric names the reported metric; DefaultCheckpointMetric if empty.
	Metric string `json:"metric,omitempty"`
}

// DefaultCheckpointMetric is the metric a job reports the Unix time of its
// last checkpoint under, unless the policy names another.
const DefaultCheckpointMetric = "last_checkpoint_unix_seconds"

// MinCheckpointStepSeconds bounds how often the checkpoint part may change
// by time alone: a step is at least this long, so a job's boost is
// written at most once a minute for it, and at most 100/stepPercent times
// per checkpoint interval.
const MinCheckpointStepSeconds = 60

// IsCheckpointMetric tells whether a reported metric may be a checkpoint
// time a policy reads: its name contains "checkpoint". The manager keeps
// only those of a training's metrics in memory.
func IsCheckpointMetric(name string) bool {
	return strings.Contains(strings.ToLower(name), "checkpoint")
}

// MetricName is the metric the part reads.
func (c CheckpointPart) MetricName() string {
	if c.Metric == "" {
		return DefaultCheckpointMetric
	}
	return c.Metric
}

// StepSeconds is how long a step of interval lasts, at least
// MinCheckpointStepSeconds.
func (c CheckpointPart) StepSeconds(interval int64) int64 {
	return max(interval*int64(c.StepPercent)/100, MinCheckpointStepSeconds)
}

// ParseCheckpointInterval reads a job's declared checkpoint interval
// (names.CheckpointIntervalAnnotation): a Go duration of at least
// MinCheckpointStepSeconds.
func ParseCheckpointInterval(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 30m or 1h", v)
	}
	if d < MinCheckpointStepSeconds*time.Second {
		return 0, fmt.Errorf("%s is under a minute: a checkpoint interval is at least 1m", d)
	}
	return d, nil
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

// PolicyOf is cq's policy, the one reader of its annotation
// (names.PreemptionCostAnnotation): set is false without one; err says
// why a set one can't be used.
func PolicyOf(cq *kueue.ClusterQueue) (p Policy, set bool, err error) {
	value, ok := Annotated(cq)
	if !ok {
		return Policy{}, false, nil
	}
	p, err = Parse(value)
	return p, true, err
}

// Annotated is cq's policy as written (explain shows it so), and whether
// it has one.
func Annotated(cq *kueue.ClusterQueue) (value string, set bool) {
	value, set = cq.Annotations[names.PreemptionCostAnnotation]
	return value, set
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
	if p.Notice != nil {
		if err := p.Notice.validate(); err != nil {
			return err
		}
	}
	var most int64
	for _, pt := range p.parts() {
		if err := pt.validate(); err != nil {
			return err
		}
		most += pt.most()
	}
	if most > math.MaxInt32 {
		return &Error{Field: "", Msg: fmt.Sprintf("the parts sum up to %d points, more than Kueue's priority-boost takes (%d, an int32): lower progress.points, preemptions.maxPoints, timeLeft.points, checkpoint.points or minRunTime.points", most, math.MaxInt32)}
	}
	return nil
}

// Steps is how many times a job's boost may change over its life under
// p: one per progress step (per start: progress is credited from each
// admission, see ProgressPart), per preemption step up to the cap, the
// time-left threshold once, the minimum run time twice per start
// (granted at admission, taken back when its time is up), and per
// checkpoint interval one per checkpoint step and one back to 0 at the
// checkpoint: the checkpoint part moves with time, so its writes are
// bounded per interval, not over a life (and by MinCheckpointStepSeconds).
func (p Policy) Steps() int32 {
	var n int32
	for _, pt := range p.parts() {
		n += pt.steps()
	}
	return n
}
