package preemptioncost_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// noticePolicy gives a preempted job two minutes to checkpoint.
const noticePolicy = `{"notice":{"seconds":120}}`

// noticeSlack is how late after the moment it is due a stop may be seen
// here: the watch, the reconcile, the suspend, and this test's poll on a
// loaded 2-core machine.
const noticeSlack = 15 * time.Second

// preemptedRunning is a queue of one 4-GPU node under policy, a
// low-priority job running on it, and a high-priority arrival that
// preempts it; it returns the victim, the arrival and the eviction's
// time (Kueue's Evicted condition).
func preemptedRunning(t *testing.T, policy string) (victim, arrival *trainer.TrainJob, since time.Time) {
	t.Helper()
	ns, lq := queueOfNodes(t, policy, 1)
	setQuota(t, ns, 4) // room for one job: the arrival must preempt
	victim = fixtures.TrainJob(ns, "victim", "long", lq)
	fixtures.Create(t, ctx, k8s, victim)
	running(t, victim)
	arrival = fixtures.TrainJob(ns, "arrival", "short", lq)
	fixtures.Create(t, ctx, k8s, arrival)
	poll.Eventually(t, 2*time.Minute, "the victim evicted", func() error {
		c := apimeta.FindStatusCondition(fixtures.WaitWorkload(t, ctx, k8s, victim).Status.Conditions, kueue.WorkloadEvicted)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not evicted yet")
		}
		since = c.LastTransitionTime.Time
		return nil
	})
	return victim, arrival, since
}

// suspendedAt waits for tj to be suspended and says when it was seen so.
func suspendedAt(t *testing.T, tj *trainer.TrainJob, within time.Duration) time.Time {
	t.Helper()
	poll.Eventually(t, within, tj.Name+" suspended", func() error {
		got := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			return err
		}
		if got.Spec.Suspend == nil || !*got.Spec.Suspend {
			return fmt.Errorf("running")
		}
		return nil
	})
	return time.Now()
}

// toldInNotice checks the victim is told while it runs on: its Workload
// and its running pods carry the notice, which ends 120 s after since.
func toldInNotice(t *testing.T, tj *trainer.TrainJob, since time.Time) {
	t.Helper()
	want := preemptcost.Notice{Since: since, Until: since.Add(2 * time.Minute)}.Value()
	poll.Eventually(t, 30*time.Second, tj.Name+" told of its notice", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if got := wl.Annotations[names.PreemptingAnnotation]; !sameNotice(got, want) {
			return fmt.Errorf("Workload: %q, want %q", got, want)
		}
		pods, err := fixtures.PodsOf(ctx, k8s, tj, "node")
		if err != nil || len(pods) == 0 {
			return fmt.Errorf("pods: %v %v", len(pods), err)
		}
		for _, p := range pods {
			if got := p.Annotations[names.PreemptingAnnotation]; !sameNotice(got, want) {
				return fmt.Errorf("pod %s: %q, want %q", p.Name, got, want)
			}
		}
		return nil
	})
	got := &trainer.TrainJob{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Suspend != nil && *got.Spec.Suspend {
		t.Fatal("the victim was suspended at once: no notice")
	}
	said(t, tj, "PreemptionNotice", "preemption notice lets it run until")
}

// sameNotice: the two notices agree on their window (the last checkpoint
// before it aside).
func sameNotice(got, want string) bool {
	var g, w struct{ Since, Until int64 }
	return json.Unmarshal([]byte(got), &g) == nil && json.Unmarshal([]byte(want), &w) == nil && g == w
}

// admittedAfter waits for the arrival's admission.
func admittedAfter(t *testing.T, arrival *trainer.TrainJob) {
	t.Helper()
	poll.Eventually(t, time.Minute, "the arrival admitted", func() error {
		if !workload.IsAdmitted(fixtures.WaitWorkload(t, ctx, k8s, arrival)) {
			return fmt.Errorf("not admitted")
		}
		return nil
	})
}

// A victim that reports a checkpoint 10 s into its notice is stopped
// within a few seconds of it, and the arrival admitted then.
func TestANoticeEndsAtTheVictimsCheckpoint(t *testing.T) {
	t.Parallel()
	victim, arrival, since := preemptedRunning(t, noticePolicy)
	toldInNotice(t, victim, since)
	time.Sleep(time.Until(since.Add(10 * time.Second)))
	checkpointed := time.Now()
	fixtures.ReportCheckpoint(t, ctx, k8s, victim, checkpointed)
	if at := suspendedAt(t, victim, time.Minute); at.Sub(checkpointed) > noticeSlack {
		t.Errorf("stopped %s after its checkpoint; want within %s", at.Sub(checkpointed), noticeSlack)
	}
	admittedAfter(t, arrival)
	said(t, victim, "PreemptionNoticeEnded", "Checkpointed")
}

// A victim that never reports a checkpoint is stopped when its notice
// runs out, not before.
func TestANoticeRunsOutWithoutACheckpoint(t *testing.T) {
	t.Parallel()
	victim, arrival, since := preemptedRunning(t, noticePolicy)
	toldInNotice(t, victim, since)
	at := suspendedAt(t, victim, 3*time.Minute)
	if end := since.Add(2 * time.Minute); at.Before(end.Add(-time.Second)) || at.After(end.Add(noticeSlack)) {
		t.Errorf("stopped %s after its eviction; want at its notice's end, 2m0s", at.Sub(since))
	}
	admittedAfter(t, arrival)
	said(t, victim, "PreemptionNoticeEnded", "RanOut")
}

// A victim that completes in its notice completes: not stopped, not
// queued again.
func TestAVictimThatCompletesInItsNoticeIsNotPreempted(t *testing.T) {
	t.Parallel()
	victim, arrival, since := preemptedRunning(t, noticePolicy)
	toldInNotice(t, victim, since)
	succeedUntilComplete(t, victim)
	poll.Eventually(t, 30*time.Second, "the victim's Workload finished, succeeded", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, victim)
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.WorkloadFinishedReasonSucceeded {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	admittedAfter(t, arrival)
	said(t, victim, "PreemptionNoticeEnded", "Completed")
}

// Without the notice part, a victim stops at once, as before.
func TestNoNoticeWithoutThePolicy(t *testing.T) {
	t.Parallel()
	victim, arrival, since := preemptedRunning(t, `{"minRunTime":{"points":10,"seconds":1}}`)
	if at := suspendedAt(t, victim, time.Minute); at.Sub(since) > noticeSlack {
		t.Errorf("stopped %s after its eviction; want at once", at.Sub(since))
	}
	admittedAfter(t, arrival)
	if got := fixtures.WaitWorkload(t, ctx, k8s, victim).Annotations[names.PreemptingAnnotation]; got != "" {
		t.Errorf("a notice was written without the policy: %q", got)
	}
}

// A SIGKILL of trainjob-kueue in a notice neither loses the stop nor
// restarts the notice: the victim, silent, is stopped at the notice's
// end, 2 minutes after its eviction, not 2 minutes after the restart.
// Not parallel: it kills the suite's manager.
func TestANoticeAcrossAKilledManagerEndsOnTime(t *testing.T) {
	victim, arrival, since := preemptedRunning(t, noticePolicy)
	toldInNotice(t, victim, since)
	start := killManager(t)
	time.Sleep(time.Until(since.Add(40 * time.Second)))
	start()
	at := suspendedAt(t, victim, 3*time.Minute)
	if end := since.Add(2 * time.Minute); at.Before(end.Add(-time.Second)) || at.After(end.Add(noticeSlack)) {
		t.Errorf("stopped %s after its eviction; want at its notice's end, 2m0s, whatever the restart", at.Sub(since))
	}
	admittedAfter(t, arrival)
}

// Deleting the victim's Workload in its notice ends the notice at once:
// the job is stopped then, not at the notice's end, and the arrival is
// admitted.
func TestANoticeEndsWhenItsWorkloadIsDeleted(t *testing.T) {
	t.Parallel()
	victim, arrival, since := preemptedRunning(t, noticePolicy)
	toldInNotice(t, victim, since)
	if err := k8s.Delete(ctx, fixtures.WaitWorkload(t, ctx, k8s, victim)); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if at := suspendedAt(t, victim, time.Minute); at.Sub(deleted) > noticeSlack {
		t.Errorf("stopped %s after its Workload was deleted; want at once, not at the notice's end", at.Sub(deleted))
	}
	admittedAfter(t, arrival)
}

// An admin who drains a ClusterQueue (stopPolicy HoldAndDrain) gives its
// running jobs their notice too: told, stopped at their checkpoint.
func TestANoticeWhenTheQueueIsDrained(t *testing.T) {
	t.Parallel()
	ns, lq := queueOfNodes(t, noticePolicy, 1)
	tj := fixtures.TrainJob(ns, "drained", "long", lq)
	fixtures.Create(t, ctx, k8s, tj)
	running(t, tj)
	drain := []byte(`{"spec":{"stopPolicy":"HoldAndDrain"}}`)
	if err := k8s.Patch(ctx, clusterQueue(ns), client.RawPatch(types.MergePatchType, drain)); err != nil {
		t.Fatal(err)
	}
	var since time.Time
	poll.Eventually(t, time.Minute, "the job evicted for its stopped queue", func() error {
		c := apimeta.FindStatusCondition(fixtures.WaitWorkload(t, ctx, k8s, tj).Status.Conditions, kueue.WorkloadEvicted)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.WorkloadEvictedByClusterQueueStopped {
			return fmt.Errorf("evicted: %v", c)
		}
		since = c.LastTransitionTime.Time
		return nil
	})
	toldInNotice(t, tj, since)
	checkpointed := time.Now()
	fixtures.ReportCheckpoint(t, ctx, k8s, tj, checkpointed)
	if at := suspendedAt(t, tj, time.Minute); at.Sub(checkpointed) > noticeSlack {
		t.Errorf("stopped %s after its checkpoint; want within %s", at.Sub(checkpointed), noticeSlack)
	}
	said(t, tj, "PreemptionNoticeEnded", "Checkpointed")
}

// said waits for an event of reason on tj whose message contains words.
func said(t *testing.T, tj *trainer.TrainJob, reason, words string) {
	t.Helper()
	poll.Eventually(t, 30*time.Second, tj.Name+" told "+reason, func() error {
		return fixtures.EventOn(ctx, k8s, tj, reason, words)
	})
}

// A notice that promises the pods 120 s of grace, on a runtime that gives
// them Kubernetes' 30 s: the job starts all the same (its pods' grace left
// as the runtime has it: JobSet refuses a change of it once the job's
// JobSet exists, and the job would hold its quota, never started), its
// owner is told to set it in the runtime, and the notice runs as ever.
func TestANoticesGraceIsSaidWhereTheRuntimeGivesLess(t *testing.T) {
	t.Parallel()
	victim, arrival, _ := preemptedRunning(t, `{"notice":{"seconds":5,"terminationGraceSeconds":120}}`)
	said(t, victim, "TerminationGraceShort", "terminationGracePeriodSeconds: 120")
	pods, err := fixtures.PodsOf(ctx, k8s, victim, "node")
	if err != nil || len(pods) == 0 {
		t.Fatalf("the victim's pods: %d, %v", len(pods), err)
	}
	for _, p := range pods {
		if g := p.Spec.TerminationGracePeriodSeconds; g == nil || *g != 30 {
			t.Errorf("pod %s: terminationGracePeriodSeconds %v; want the runtime's, Kubernetes' 30", p.Name, ptr.Deref(g, -1))
		}
	}
	suspendedAt(t, victim, time.Minute)
	admittedAfter(t, arrival)
}
