package queuecondition

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// told is what the condition says of a state; write false for a state it
// does not say (the condition stays as it was).
type told struct {
	write  bool
	status metav1.ConditionStatus
	// words are the condition's message, from what is stable in the
	// state: never Kueue's pending message or the checks' states, which
	// change with the queue and would be a write each.
	words func(st lifecycle.Status, clusterQueue string) string
}

// tellings is the condition's table of the lifecycle's states
// (TestEveryStateIsTold). A finished job's condition stays as it was:
// Trainer's Complete or Failed says the rest. A job Kueue does not queue
// gets none.
func tellings() map[lifecycle.State]told {
	said := func(st lifecycle.Status, _ string) string { return st.Message }
	no := told{}
	return map[lifecycle.State]told{
		lifecycle.NotQueued: no,
		lifecycle.Queued:    {true, metav1.ConditionFalse, queuedWords("queued")},
		lifecycle.Requeued: {true, metav1.ConditionFalse, func(st lifecycle.Status, cq string) string {
			return queuedWords("queued again after an eviction ("+st.Reason+")")(st, cq)
		}},
		lifecycle.WaitingForRuntime: {true, metav1.ConditionFalse, said},
		lifecycle.HeldByPolicy:      {true, metav1.ConditionFalse, said},
		lifecycle.HeldOnWorker:      {true, metav1.ConditionFalse, said},
		lifecycle.Inactive:          {true, metav1.ConditionFalse, said},
		lifecycle.QuotaReserved: {true, metav1.ConditionFalse, func(st lifecycle.Status, _ string) string {
			return fmt.Sprintf("quota reserved in ClusterQueue %s; waiting for its admission checks", st.ClusterQueue)
		}},
		lifecycle.Admitted: {true, metav1.ConditionTrue, admittedWords},
		lifecycle.Running:  {true, metav1.ConditionTrue, admittedWords},
		lifecycle.Evicted: {true, metav1.ConditionFalse, func(st lifecycle.Status, _ string) string {
			if !st.NoticeUntil.IsZero() {
				return fmt.Sprintf("evicted from ClusterQueue %s (%s), in its preemption notice until %s: it runs on to checkpoint, is stopped at its first checkpoint reported after the eviction (or then), and is queued again once stopped",
					st.ClusterQueue, st.Reason, st.NoticeUntil.UTC().Format(time.RFC3339))
			}
			return fmt.Sprintf("evicted from ClusterQueue %s (%s), being stopped; it is queued again once stopped", st.ClusterQueue, st.Reason)
		}},
		lifecycle.Finished: no,
		lifecycle.Failed:   no,
	}
}

// queuedWords: where a waiting job waits. clusterQueue is where its
// LocalQueue leads ("" when the LocalQueue does not exist).
func queuedWords(what string) func(lifecycle.Status, string) string {
	return func(st lifecycle.Status, clusterQueue string) string {
		if clusterQueue == "" {
			return fmt.Sprintf("%s on LocalQueue %s, which does not exist (or leads to no ClusterQueue): create it, or name another in the kueue.x-k8s.io/queue-name label", what, st.LocalQueue)
		}
		return fmt.Sprintf("%s on LocalQueue %s (ClusterQueue %s), waiting for quota; kubectl trainjob-kueue explain says why it does not fit yet", what, st.LocalQueue, clusterQueue)
	}
}

// admittedWords are the same admitted or running: the start is Trainer's
// to tell (its Suspended condition), not a write of ours.
func admittedWords(st lifecycle.Status, _ string) string {
	if st.Worker != "" {
		return fmt.Sprintf("admitted by ClusterQueue %s; runs on MultiKueue worker cluster %s", st.ClusterQueue, st.Worker)
	}
	return "admitted by ClusterQueue " + st.ClusterQueue
}

// Reason is the condition's reason for a state: the lifecycle's word, as
// the metric's label and list and explain say it. Admitted and Running
// are one reason (Admitted): the start is Trainer's to tell.
func Reason(s lifecycle.State) string {
	if s == lifecycle.Running {
		return string(lifecycle.Admitted)
	}
	return string(s)
}

// conditionFor is the condition st asks for, and whether it is written.
// It claims no observedGeneration: it tells the Workload's state, not how
// far the job's spec was read, and kubectl wait ignores a condition whose
// observedGeneration is behind the job's generation, which the start's
// own write (spec.suspend) moves on after the admission is told.
func conditionFor(st lifecycle.Status, clusterQueue string) (metav1.Condition, bool) {
	t, ok := tellings()[st.State]
	if !ok || !t.write {
		return metav1.Condition{}, false
	}
	return metav1.Condition{Type: names.AdmittedCondition, Status: t.status, Reason: Reason(st.State),
		Message: truncate(t.words(st, clusterQueue))}, true
}

// truncate keeps a message within metav1.Condition's 32768 bytes.
func truncate(msg string) string {
	const max = 32768
	if len(msg) <= max {
		return msg
	}
	return msg[:max-3] + "..."
}

// same: the condition on the job already says c (the time and the
// generation aside: neither is a reason to write).
func same(on *metav1.Condition, c metav1.Condition) bool {
	return on != nil && on.Status == c.Status && on.Reason == c.Reason && on.Message == c.Message
}
