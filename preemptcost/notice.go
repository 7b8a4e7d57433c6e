package preemptcost

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// NoticePart: a running TrainJob whose Workload Kueue evicts for a reason
// NoticedEviction names keeps running for up to Seconds, told it is being
// preempted, and is stopped as soon as it reports a checkpoint made after
// the eviction (or completes, or the notice runs out). Kueue keeps the
// victim's quota reserved until it stops, so the preemptor's extra wait is
// at most the notice.
//
// TerminationGraceSeconds, when set, is the least SIGTERM → SIGKILL grace
// the job's pods should get when they are stopped (at the notice's end, or
// at once): a training loop that saves on SIGTERM (Lightning,
// Transformers) needs that long. A promise checked at admission and said
// where the runtime gives less, not written: JobSet refuses a change of a
// pod's grace once the job's JobSet exists.
type NoticePart struct {
	Seconds                 int32 `json:"seconds"`
	TerminationGraceSeconds int64 `json:"terminationGraceSeconds,omitempty"`
}

// MaxNoticeSeconds bounds a notice: a preemptor waits at most this long
// for its victims on top of their stop, and the notice is for a
// checkpoint, not for finishing the run.
const MaxNoticeSeconds = 15 * 60

func (n NoticePart) validate() error {
	if n.Seconds < 1 || n.Seconds > MaxNoticeSeconds {
		return &Error{Field: "notice.seconds", Msg: fmt.Sprintf("%d is not in 1..%d: give the seconds a preempted job may run on to checkpoint (at most 15 minutes), or remove the notice part", n.Seconds, MaxNoticeSeconds)}
	}
	if n.TerminationGraceSeconds < 0 || n.TerminationGraceSeconds > MaxNoticeSeconds {
		return &Error{Field: "notice.terminationGraceSeconds", Msg: fmt.Sprintf("%d is not in 0..%d: give the least seconds between SIGTERM and SIGKILL the job's pods should get when stopped (at most 15 minutes), or leave it out", n.TerminationGraceSeconds, MaxNoticeSeconds)}
	}
	return nil
}

// TerminationGrace is the grace p promises the pods of a job whose
// template gives them have (nil: Kubernetes' 30 s), and whether they get
// less than that.
func TerminationGrace(p Policy, have *int64) (int64, bool) {
	if p.Notice == nil || p.Notice.TerminationGraceSeconds == 0 {
		return 0, false
	}
	own := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if have != nil {
		own = *have
	}
	return p.Notice.TerminationGraceSeconds, p.Notice.TerminationGraceSeconds > own
}

// NoticedEviction tells whether an eviction of this reason gets a notice:
// a preemption (another job needs the quota, and Kueue holds it for it
// until the victim stops), a queue drained by its admin (stopPolicy
// HoldAndDrain) and a move to a better flavor (Kueue's flavor
// migration): the job did nothing wrong and loses its work since its last
// checkpoint unless told. The others stop at once: the job is past a
// limit of its own (maximum execution time, PodsReady timeout), its node
// failed, an admission check or its owner withdrew it (deactivation) —
// running on would be running where it may no longer run.
func NoticedEviction(reason string) bool {
	switch reason {
	case kueue.WorkloadEvictedByPreemption, kueue.WorkloadEvictedByClusterQueueStopped, kueue.WorkloadEvictedByLocalQueueStopped,
		kueue.WorkloadEvictedByFlavorMigration:
		return true
	}
	return false
}

// ParseNoticeRequest reads a job's own notice request
// (names.PreemptionNoticeAnnotation): a Go duration from 0 (none) to
// MaxNoticeSeconds.
func ParseNoticeRequest(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 2m or 0s", v)
	}
	if d < 0 || d > MaxNoticeSeconds*time.Second {
		return 0, fmt.Errorf("%s is not within 0s..15m: a job asks for a notice of at most its ClusterQueue's, and 15m", d)
	}
	return d, nil
}

// NoticeLength is the notice job gets under p: the policy's, or the
// job's own request when shorter; 0 for none (no notice part, the job
// asks for 0s, or its request is unreadable: the webhook refuses such a
// value, and a job that slipped one past it is not given more than it
// asked for).
func NoticeLength(p Policy, job *trainjob.TrainJob) time.Duration {
	if p.Notice == nil {
		return 0
	}
	length := time.Duration(p.Notice.Seconds) * time.Second
	if v, ok := job.Annotations[names.PreemptionNoticeAnnotation]; ok {
		asked, err := ParseNoticeRequest(v)
		if err != nil {
			return 0
		}
		length = min(length, asked)
	}
	return length
}

// Notice is a preempted job's window: from Kueue's eviction (the Evicted
// condition's time, which no user writes and a restarted manager reads
// again) until Since + the notice's length.
type Notice struct {
	Since time.Time `json:"-"`
	Until time.Time `json:"-"`
	// LastCheckpoint is the checkpoint the job had reported when the
	// notice began (Unix seconds; 0 for none): the work the notice saves
	// is counted from it.
	LastCheckpoint int64 `json:"-"`
}

// NoticeOf is the notice wl's eviction gives, for a notice of length:
// ok is false when the Workload is not evicted, not for a noticed reason,
// or length is 0.
func NoticeOf(wl *kueue.Workload, length time.Duration) (Notice, bool) {
	if wl == nil || length <= 0 {
		return Notice{}, false
	}
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if c == nil || c.Status != metav1.ConditionTrue || !NoticedEviction(c.Reason) {
		return Notice{}, false
	}
	since := c.LastTransitionTime.Time
	return Notice{Since: since, Until: since.Add(length)}, true
}

// CheckpointAt is the Unix time (seconds) of the last checkpoint job
// reports under metric, when it reports one no later than now (a clock
// ahead of ours must not pass for a checkpoint just made).
func CheckpointAt(job *trainjob.TrainJob, metric string, now time.Time) (int64, bool) {
	ago := checkpointAgo(job, metric, now)
	if ago == nil {
		return 0, false
	}
	return now.Unix() - *ago, true
}

// CheckpointedIn is the checkpoint job reports that was made within n
// (at or after its start, no later than now): the notice's end.
func CheckpointedIn(n Notice, job *trainjob.TrainJob, metric string, now time.Time) (int64, bool) {
	at, ok := CheckpointAt(job, metric, now)
	if !ok || at < n.Since.Unix() {
		return 0, false
	}
	return at, true
}

// noticeJSON is the written form of a Notice.
type noticeJSON struct {
	Since          int64 `json:"since"`
	Until          int64 `json:"until"`
	LastCheckpoint int64 `json:"lastCheckpoint,omitempty"`
}

// Value is n as names.PreemptingAnnotation holds it.
func (n Notice) Value() string {
	data, _ := json.Marshal(noticeJSON{Since: n.Since.Unix(), Until: n.Until.Unix(), LastCheckpoint: n.LastCheckpoint})
	return string(data)
}

// NoticeOn is the notice written on wl (names.PreemptingAnnotation) when
// it is the one wl's current eviction gives: a notice of an earlier
// eviction, or of one that ended, is not. The job may have stopped since
// (a reader that shows a notice in progress asks whether wl still holds
// its quota).
func NoticeOn(wl *kueue.Workload) (Notice, bool) {
	if wl == nil {
		return Notice{}, false
	}
	v, ok := wl.Annotations[names.PreemptingAnnotation]
	if !ok {
		return Notice{}, false
	}
	var w noticeJSON
	dec := json.NewDecoder(strings.NewReader(v))
	if dec.Decode(&w) != nil || w.Until <= w.Since {
		return Notice{}, false
	}
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if c == nil || c.Status != metav1.ConditionTrue || c.LastTransitionTime.Unix() != w.Since {
		return Notice{}, false
	}
	return Notice{Since: time.Unix(w.Since, 0), Until: time.Unix(w.Until, 0), LastCheckpoint: w.LastCheckpoint}, true
}

// Saved is the work, in seconds, a notice that ended with a checkpoint
// saved: what a stop at the eviction would have lost, the time since the
// last checkpoint before it (or since the job's start, started, without
// one). The work done in the notice itself is kept too, and not counted:
// the preemptor waited for it.
func (n Notice) Saved(started time.Time) int64 {
	from := max(n.LastCheckpoint, started.Unix())
	return max(n.Since.Unix()-from, 0)
}
