package preemptcost

import (
	"math"
	"strconv"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// SignalsOf are what job, its roles (nil when they can't be computed) and
// its Workload tell, at now, of what losing the job would cost; metric is
// the trainer status metric the job reports its last checkpoint under.
func SignalsOf(job *trainjob.TrainJob, roles []podsets.Role, wl *kueue.Workload, now time.Time, metric string) Signals {
	s := Signals{Training: training(job, roles), Preemptions: Preemptions(wl)}
	s.CheckpointAgo = checkpointAgo(job, metric, now)
	s.CheckpointInterval = CheckpointInterval(job)
	// Running: admitted and not being evicted. An evicted Workload keeps
	// its admission until its job has stopped, with its new preemption
	// already counted: boosted then, it would be pending at once with the
	// boost of a running job, and preempt a peer (a cascade).
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue &&
		!apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
		run := int64(now.Sub(c.LastTransitionTime.Time) / time.Second)
		s.RunSeconds = &run
	}
	if ts := job.Status.TrainerStatus; ts != nil {
		s.ProgressPercent = ts.ProgressPercentage
		s.RemainingSeconds = ts.EstimatedRemainingSeconds
	}
	return s
}

// training: every initializer of the job completed, so its trainer phase
// began. A job whose roles can't be computed is taken as not training:
// its progress is not believed.
func training(job *trainjob.TrainJob, roles []podsets.Role) bool {
	if roles == nil {
		return false
	}
	succeeded := map[string]int32{}
	for _, s := range job.Status.JobsStatus {
		succeeded[s.Name] = ptr.Deref(s.Succeeded, 0)
	}
	for _, r := range roles {
		if r.IsInitializer() && succeeded[r.Name] < r.Replicas {
			return false
		}
	}
	return true
}

// checkpointAgo is how long before now the job reports it last
// checkpointed: the metric's value, a Unix time in seconds (a fraction
// allowed). nil when it reports none, or a value that is no such time or
// lies in the future: a clock ahead of ours must not pass for a
// checkpoint just made.
func checkpointAgo(job *trainjob.TrainJob, metric string, now time.Time) *int64 {
	ts := job.Status.TrainerStatus
	if ts == nil || metric == "" {
		return nil
	}
	for _, m := range ts.Metrics {
		if m.Name != metric {
			continue
		}
		at, err := strconv.ParseFloat(strings.TrimSpace(m.Value), 64)
		if err != nil || at <= 0 || math.IsInf(at, 0) {
			return nil
		}
		ago := now.Unix() - int64(at)
		if ago < 0 {
			return nil
		}
		return &ago
	}
	return nil
}

// CheckpointInterval is the interval, in seconds, the job declares it
// checkpoints at (names.CheckpointIntervalAnnotation); nil when it
// declares none or one the webhook would refuse.
func CheckpointInterval(job *trainjob.TrainJob) *int64 {
	v, ok := job.Annotations[names.CheckpointIntervalAnnotation]
	if !ok {
		return nil
	}
	d, err := ParseCheckpointInterval(v)
	if err != nil {
		return nil
	}
	secs := int64(d / time.Second)
	return &secs
}
