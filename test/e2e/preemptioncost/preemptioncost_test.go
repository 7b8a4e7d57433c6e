package preemptioncost_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// Two equal-priority jobs fill a ClusterQueue: A admitted first, at 10%;
// B second, at 90%. A higher-priority job needs one of them to go. Kueue
// alone preempts B, the most recently admitted, and loses 90% of a
// training; under the progress policy it preempts A, and B completes.
func TestTheVictimFlipsWithThePolicy(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	for name, tc := range map[string]struct {
		policy string
		victim string
	}{
		"without a policy": {victim: "b"},
		"with the policy":  {policy: progressPolicy, victim: "a"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns, lq := queueOf(t, tc.policy)
			a, b := fixtures.TrainJob(ns, "a", "long", lq), fixtures.TrainJob(ns, "b", "long", lq)
			for _, tj := range []*trainer.TrainJob{a, b} {
				fixtures.Create(t, ctx, k8s, tj)
				running(t, tj)
			}
			fixtures.ReportProgress(t, ctx, k8s, a, 10)
			fixtures.ReportProgress(t, ctx, k8s, b, 90)
			if tc.policy != "" {
				waitBoost(t, a, "80")
				waitBoost(t, b, "720")
			}
			high := fixtures.TrainJob(ns, "high", "short", lq)
			fixtures.Create(t, ctx, k8s, high)
			if got := preempted(t, a, b); got.Name != tc.victim {
				t.Fatalf("%s preempted, want %s", got.Name, tc.victim)
			}
			fixtures.WaitComplete(t, ctx, k8s, high, 2*time.Minute)
			if tc.victim == "a" {
				succeedUntilComplete(t, b)
			}
		})
	}
}

// However often a running job reports progress, its Workload is written
// once per step of the policy: 50 reports from 1% to 50% under a policy of
// 10% steps are at most 5 writes.
func TestBoostWritesAreBoundedByThePolicysSteps(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	ns, lq := queueOf(t, progressPolicy)
	tj := fixtures.TrainJob(ns, "j", "long", lq)
	fixtures.Create(t, ctx, k8s, tj)
	running(t, tj)
	wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
	start := time.Now()
	for pct := int32(1); pct <= 50; pct++ {
		fixtures.ReportProgress(t, ctx, k8s, tj, pct)
		time.Sleep(100 * time.Millisecond) // a status server reporting often
	}
	waitBoost(t, tj, "400")
	// What the last reports set in motion is done once the boost is right
	// and stays so.
	poll.Consistently(t, 5*time.Second, "the boost stays", func() error {
		if got := boostOf(t, tj); got != "400" {
			return fmt.Errorf("boost %q", got)
		}
		return nil
	})
	writes := workloadWrites(t, ns, wl.Name, start)
	if writes < 1 || writes > 5 {
		t.Errorf("%d writes of the Workload for 50 progress reports, want 1 to 5 (one per 10%% step)", writes)
	}
}

// A job preempted before is admitted before an equal-priority newcomer
// queued after it, once the quota frees: Kueue keeps it in its place by
// its creation time. It waits with no boost (a pending job's boost would
// be its power to preempt its peers), and once it runs again its
// preemptions protect it.
func TestAPreemptedJobIsAdmittedBeforeANewcomer(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	ns, lq := queueOf(t, preemptionsPolicy)
	// The quota of one job at a time.
	setQuota(t, ns, 4)
	victim := fixtures.TrainJob(ns, "victim", "long", lq)
	fixtures.Create(t, ctx, k8s, victim)
	running(t, victim)
	newcomer := fixtures.TrainJob(ns, "newcomer", "long", lq)
	fixtures.Create(t, ctx, k8s, newcomer)
	high := fixtures.TrainJob(ns, "high", "short", lq)
	fixtures.Create(t, ctx, k8s, high)
	preempted(t, victim)
	poll.Consistently(t, 5*time.Second, "no boost while pending", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, victim); !workload.HasQuotaReservation(wl) {
			if got := boostOf(t, victim); got != "" {
				return fmt.Errorf("pending with boost %q", got)
			}
		}
		return nil
	})
	fixtures.WaitComplete(t, ctx, k8s, high, 2*time.Minute)
	poll.Eventually(t, 2*time.Minute, "the victim admitted again", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, newcomer); workload.HasQuotaReservation(wl) {
			t.Fatalf("the newcomer was admitted before the job preempted for it")
		}
		if wl := fixtures.WaitWorkload(t, ctx, k8s, victim); !workload.IsAdmitted(wl) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		return nil
	})
	waitBoost(t, victim, "500")
}

// The set-up: three equal jobs run on 12 GPUs at 85%, 20% and 55%
// of their training, an equal one waits; a job of a higher class
// arrives. Kueue preempts the cheapest, b. b, pending, has no boost, so
// it can't preempt a or c: they keep their pods (the same UIDs) and
// their Workloads are never evicted, however long the arrival runs.
// Before, b's preemptions part (3000) made it outrank c, then c a: one
// arrival stopped three jobs. Once room frees, b is admitted before the
// equal job queued after it.
func TestOneArrivalPreemptsOneJobNeverACascade(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	oneArrivalOneStop(t, `{"progress":{"points":1000,"stepPercent":5,"maxPercentPerHour":360000},"preemptions":{"points":3000,"every":1,"maxPoints":3000},"timeLeft":{"points":500,"underSeconds":600}}`)
}

// The same with the preemptions part as large as a valid policy allows
// beside the progress part, counted at every preemption (make test-full).
func TestOneArrivalPreemptsOneJobAtTheMostPreemptionPoints(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	oneArrivalOneStop(t, `{"progress":{"points":1000,"stepPercent":5,"maxPercentPerHour":360000},"preemptions":{"points":2147480000,"every":1,"maxPoints":2147480000}}`)
}

// oneArrivalOneStop runs the set-up above under policy.
func oneArrivalOneStop(t *testing.T, policy string) {
	t.Helper()
	ns, lq := queueOfNodes(t, policy, 3)
	// Kueue's priorities (WorkloadPriorityClasses), as the issue's: the
	// arrival's pod has no PriorityClass, so kube-scheduler preempts no
	// pod of its own (it did, with the pods' classes: c's pod went while
	// b's were terminating, whatever Kueue decided).
	fixtures.Create(t, ctx, k8s,
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-wlow"}, Value: lowPriority},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-whigh"}, Value: highPriority},
		fixtures.TrainingRuntime(ns, "arrival", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(3 * time.Second)}))
	classed := func(tj *trainer.TrainJob, class string) *trainer.TrainJob {
		tj.Labels[constants.WorkloadPriorityClassLabel] = ns + class
		return tj
	}
	jobs := map[string]*trainer.TrainJob{}
	for name, pct := range map[string]int32{"a": 85, "b": 20, "c": 55} {
		tj := classed(fixtures.TrainJob(ns, name, "long", lq), "-wlow")
		fixtures.Create(t, ctx, k8s, tj)
		running(t, tj)
		fixtures.ReportProgress(t, ctx, k8s, tj, pct)
		jobs[name] = tj
	}
	waitBoost(t, jobs["a"], "850")
	waitBoost(t, jobs["b"], "200")
	waitBoost(t, jobs["c"], "550")
	late := classed(fixtures.TrainJob(ns, "late", "long", lq), "-wlow")
	fixtures.Create(t, ctx, k8s, late)
	pods := map[string][]string{}
	for _, name := range []string{"a", "c"} {
		pods[name] = podUIDs(t, jobs[name])
	}
	arrived := time.Now()
	high := classed(fixtures.TrainJob(ns, "high", "arrival", lq), "-whigh")
	fixtures.Create(t, ctx, k8s, high)
	if victim := preempted(t, jobs["a"], jobs["b"], jobs["c"]); victim.Name != "b" {
		t.Fatalf("%s preempted, want b, the cheapest", victim.Name)
	}
	poll.Consistently(t, 30*time.Second, "a and c keep running", func() error {
		for _, name := range []string{"a", "c"} {
			if n := preemptcost.Preemptions(fixtures.WaitWorkload(t, ctx, k8s, jobs[name])); n != 0 {
				t.Fatalf("%s preempted too (%d): one arrival stopped more than one job", name, n)
			}
			if got := podUIDs(t, jobs[name]); !slices.Equal(got, pods[name]) {
				t.Fatalf("%s runs on other pods now (%v, was %v): it was stopped", name, got, pods[name])
			}
		}
		return nil
	})
	// The API server's word: trainjob-kueue wrote no TrainJob but b, the
	// one it stopped (and started again), since the arrival.
	for _, name := range []string{"a", "c"} {
		if n := trainJobWrites(t, ns, name, arrived); n != 0 {
			t.Errorf("TrainJob %s written %d times since the arrival: stopped", name, n)
		}
	}
	fixtures.WaitComplete(t, ctx, k8s, high, 2*time.Minute)
	poll.Eventually(t, 2*time.Minute, "b admitted again, before late", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, late); workload.HasQuotaReservation(wl) {
			t.Fatalf("late, queued after b was, was admitted first")
		}
		if wl := fixtures.WaitWorkload(t, ctx, k8s, jobs["b"]); !workload.IsAdmitted(wl) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		return nil
	})
}

// podUIDs are the UIDs of tj's trainer pods, sorted.
func podUIDs(t *testing.T, tj *trainer.TrainJob) []string {
	t.Helper()
	pods, err := fixtures.PodsOf(ctx, k8s, tj, "node")
	if err != nil {
		t.Fatal(err)
	}
	var uids []string
	for _, p := range pods {
		uids = append(uids, string(p.UID))
	}
	slices.Sort(uids)
	return uids
}

// A job in its initializer wave has lost no training: its progress, even
// claimed, boosts nothing.
func TestAJobInItsInitializerWaveGetsNoProgressBoost(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	ns, lq := queueOf(t, progressPolicy)
	tj := fixtures.TrainJob(ns, "j", "init", lq)
	fixtures.Create(t, ctx, k8s, tj)
	poll.Eventually(t, 2*time.Minute, "the initializer running", func() error {
		pods, err := fixtures.PodsOf(ctx, k8s, tj, "dataset-initializer")
		if err != nil || len(pods) == 0 {
			return fmt.Errorf("no initializer pod: %v", err)
		}
		return nil
	})
	fixtures.ReportProgress(t, ctx, k8s, tj, 90)
	poll.Consistently(t, 10*time.Second, "no boost", func() error {
		if got := boostOf(t, tj); got != "" {
			return fmt.Errorf("boost %q", got)
		}
		return nil
	})
}

// The policy removed, the boosts it set are taken back, and nothing is
// written after; a policy that can't be read is refused when written, and
// one that got through while the manager was down is said on the
// ClusterQueue and writes nothing.
// Not parallel: it stops the manager, which the others need running.
func TestPolicyRemovedOrUnreadable(t *testing.T) {
	ns, lq := queueOf(t, progressPolicy)
	tj := fixtures.TrainJob(ns, "j", "long", lq)
	fixtures.Create(t, ctx, k8s, tj)
	running(t, tj)
	fixtures.ReportProgress(t, ctx, k8s, tj, 50)
	waitBoost(t, tj, "400")
	setPolicy(t, ns, "")
	waitBoost(t, tj, "")
	if _, ours := fixtures.WaitWorkload(t, ctx, k8s, tj).Annotations[names.PriorityBoostAnnotation]; ours {
		t.Error("our mark left on the Workload")
	}
	// Refused when written, naming the field; through while the manager is
	// down (the ClusterQueue webhook fails open), and said once it is back.
	unreadable := `{"progress":{"points":3000000000,"stepPercent":10}}`
	if err := annotatePolicy(ns, unreadable); err == nil || !strings.Contains(err.Error(), names.PreemptionCostAnnotation) || !strings.Contains(err.Error(), "not a policy") {
		t.Fatalf("annotating an unreadable policy: %v, want a refusal naming the annotation", err)
	}
	if err := cluster.Crash("trainjob-kueue"); err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	err := annotatePolicy(ns, unreadable)
	if serr := cluster.Start(ctx, "trainjob-kueue"); serr != nil {
		t.Fatal(serr)
	}
	if err != nil {
		t.Fatalf("with the manager down a ClusterQueue edit must go through (failurePolicy Ignore): %v", err)
	}
	fixtures.ReportProgress(t, ctx, k8s, tj, 60)
	poll.Eventually(t, 30*time.Second, "a Warning on the ClusterQueue", func() error {
		return fixtures.EventOn(ctx, k8s, clusterQueue(ns), "InvalidPreemptionCostPolicy", "not a policy")
	})
	poll.Consistently(t, 5*time.Second, "no boost", func() error {
		if got := boostOf(t, tj); got != "" {
			return fmt.Errorf("boost %q", got)
		}
		return nil
	})
	if n := workloadWrites(t, ns, fixtures.WaitWorkload(t, ctx, k8s, tj).Name, since); n != 0 {
		t.Errorf("%d writes of the Workload under an unreadable policy", n)
	}
}

// trainJobWrites counts trainjob-kueue's writes of TrainJob ns/name since
// since, from the API server's audit log: a stop or a start is one.
func trainJobWrites(t *testing.T, ns, name string, since time.Time) int {
	t.Helper()
	events, err := localcluster.AuditEvents(cluster.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.User.Username == localcluster.ManagerUser && !e.Received.Before(since) && e.ObjectRef != nil &&
			e.ObjectRef.Resource == "trainjobs" && e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name &&
			e.ObjectRef.Subresource == "" && (e.Verb == "patch" || e.Verb == "update")
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(events)
}

// workloadWrites counts our manager's writes of Workload ns/name since
// since that took (a 2xx answer), from the API server's audit log.
func workloadWrites(t *testing.T, ns, name string, since time.Time) int {
	t.Helper()
	events, err := localcluster.AuditEvents(cluster.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.User.Username == localcluster.ManagerUser && !e.Received.Before(since) && e.ObjectRef != nil &&
			e.ObjectRef.Resource == "workloads" && e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name &&
			e.ObjectRef.Subresource == "" && (e.Verb == "patch" || e.Verb == "update")
	})
	if err != nil {
		t.Fatal(err)
	}
	// A guarded write that lost a race with Kueue's own (409) changed
	// nothing: the reconcile reads the new state and writes once more.
	// Counted are the writes that took.
	var lines []string
	took := 0
	for _, e := range events {
		code := 0
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		lines = append(lines, fmt.Sprintf("%s %s: %d", e.Verb, e.RequestURI, code))
		if e.Succeeded() {
			took++
		}
	}
	t.Logf("requests to write Workload %s/%s: %s", ns, name, strings.Join(lines, "; "))
	return took
}

// minRunTimePolicy boosts a job for 40 s after each admission.
const minRunTimePolicy = `{"minRunTime":{"points":1000,"seconds":40}}`

// A job just admitted is not the victim while its minimum run time lasts:
// the arrival takes the job admitted before it, which Kueue alone spares
// (it preempts the most recently admitted first). Its boost is taken back
// with one write when the time is up, and it is the victim again.
func TestAJobJustAdmittedIsSparedForItsMinimumRunTime(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	ns, lq := queueOf(t, minRunTimePolicy)
	a := fixtures.TrainJob(ns, "a", "long", lq)
	fixtures.Create(t, ctx, k8s, a)
	running(t, a)
	waitBoost(t, a, "1000")
	waitBoost(t, a, "") // its 40 s are up
	b := fixtures.TrainJob(ns, "b", "long", lq)
	fixtures.Create(t, ctx, k8s, b)
	running(t, b)
	waitBoost(t, b, "1000")
	since := time.Now()
	high := fixtures.TrainJob(ns, "high", "short", lq)
	fixtures.Create(t, ctx, k8s, high)
	if got := preempted(t, a, b); got.Name != "a" {
		t.Fatalf("%s preempted while its minimum run time lasted, want a", got.Name)
	}
	fixtures.WaitComplete(t, ctx, k8s, high, 2*time.Minute)
	waitBoost(t, b, "")
	if n := workloadWrites(t, ns, fixtures.WaitWorkload(t, ctx, k8s, b).Name, since); n != 1 {
		t.Errorf("%d writes of b's Workload from the arrival to its boost's removal, want the removal alone", n)
	}
	// a is admitted again (and boosted for its own 40 s): b is the one to go.
	poll.Eventually(t, 2*time.Minute, "a admitted again", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, a); !workload.IsAdmitted(wl) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		return nil
	})
	waitBoost(t, a, "1000")
	high2 := fixtures.TrainJob(ns, "high2", "short", lq)
	fixtures.Create(t, ctx, k8s, high2)
	poll.Eventually(t, 2*time.Minute, "b preempted", func() error {
		if preemptcost.Preemptions(fixtures.WaitWorkload(t, ctx, k8s, b)) == 0 {
			return fmt.Errorf("b not preempted yet")
		}
		return nil
	})
	if n := preemptcost.Preemptions(fixtures.WaitWorkload(t, ctx, k8s, a)); n != 1 {
		t.Errorf("a preempted %d times, want once: within its minimum run time it is spared", n)
	}
}

// checkpointPolicy counts the work lost since the last checkpoint, in
// steps of a minute (10% of 10 minutes).
const checkpointPolicy = `{"checkpoint":{"points":1000,"stepPercent":10,"intervalSeconds":600}}`

// Two jobs of one priority, B admitted after A. Two minutes in, A reports
// a checkpoint just made and B none since its start (its checkpoint time,
// reported too, is its start's). An arrival needs one of them: Kueue alone
// preempts B, the most recently admitted, losing its two minutes; under
// the policy it preempts A, which loses nothing. (Time is compressed: the
// policy's steps are a minute, the shortest it allows.)
func TestTheVictimIsTheJobThatCheckpointedLast(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	for name, tc := range map[string]struct {
		policy string
		victim string
	}{
		"without a policy": {victim: "b"},
		"with the policy":  {policy: checkpointPolicy, victim: "a"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			victimOfTwo(t, tc.policy, tc.victim, nil, func(a, b *trainer.TrainJob) {
				started := time.Now()
				fixtures.ReportCheckpoint(t, ctx, k8s, b, started)
				time.Sleep(125*time.Second - time.Since(started))
				fixtures.ReportCheckpoint(t, ctx, k8s, a, time.Now())
				if tc.policy != "" {
					waitBoost(t, a, "")
					waitBoost(t, b, "200")
				}
			})
		})
	}
}

// The same flip from declared intervals, which any Trainer release allows
// (make test-full runs it on Trainer v2.1.0, which reports nothing): A
// declares it checkpoints every minute, B every 10 minutes. Two minutes
// in, A would lose under a minute (no step), B two minutes (two steps):
// under the policy A goes; without it Kueue takes B, admitted last.
func TestTheVictimIsTheJobThatCheckpointedLastByItsDeclaredInterval(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	for name, tc := range map[string]struct {
		policy string
		victim string
	}{
		"without a policy": {victim: "b"},
		"with the policy":  {policy: checkpointPolicy, victim: "a"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			declare := func(a, b *trainer.TrainJob) {
				a.Annotations = map[string]string{names.CheckpointIntervalAnnotation: "1m"}
				b.Annotations = map[string]string{names.CheckpointIntervalAnnotation: "10m"}
			}
			victimOfTwo(t, tc.policy, tc.victim, declare, func(a, b *trainer.TrainJob) {
				if tc.policy == "" {
					return
				}
				poll.Eventually(t, 3*time.Minute, "b boosted two steps", func() error {
					if got := boostOf(t, b); got != "200" {
						return fmt.Errorf("boost %q", got)
					}
					return nil
				})
				if got := boostOf(t, a); got != "" {
					t.Fatalf("a, checkpointing every minute, boosted %q", got)
				}
			})
		})
	}
}

// victimOfTwo runs two jobs of one priority under policy ("" for none), a
// admitted before b, edited by edit before they are created; between
// brings them to the state compared; then a higher-priority arrival needs
// one of them, and victim must be the one preempted.
func victimOfTwo(t *testing.T, policy, victim string, edit, between func(a, b *trainer.TrainJob)) {
	t.Helper()
	ns, lq := queueOf(t, policy)
	a, b := fixtures.TrainJob(ns, "a", "long", lq), fixtures.TrainJob(ns, "b", "long", lq)
	if edit != nil {
		edit(a, b)
	}
	fixtures.Create(t, ctx, k8s, a)
	running(t, a)
	fixtures.Create(t, ctx, k8s, b)
	running(t, b)
	between(a, b)
	high := fixtures.TrainJob(ns, "high", "short", lq)
	fixtures.Create(t, ctx, k8s, high)
	if got := preempted(t, a, b); got.Name != victim {
		t.Fatalf("%s preempted, want %s", got.Name, victim)
	}
}

// Progress is self-reported: a job that claims 100% at its first report is
// credited no faster than the policy's rate since its admission. At 1% a
// second (maxPercentPerHour 3600) and steps of 10%, its boost climbs one
// step (80 points) about every 10 s, never ahead of the time it ran, and
// reaches the part's 800 points only after 100 s.
func TestProgressIsCreditedAtTheRateThePolicySets(t *testing.T) {
	t.Parallel() // a namespace and ClusterQueue of its own
	ns, lq := queueOf(t, `{"progress":{"points":800,"stepPercent":10,"maxPercentPerHour":3600}}`)
	tj := fixtures.TrainJob(ns, "j", "long", lq)
	fixtures.Create(t, ctx, k8s, tj)
	running(t, tj)
	fixtures.ReportProgress(t, ctx, k8s, tj, 100)
	poll.Eventually(t, 3*time.Minute, "the whole progress part credited", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		admitted := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
		got := boostOf(t, tj)
		if admitted == nil || got == "" {
			return fmt.Errorf("boost %q", got)
		}
		points, err := strconv.Atoi(got)
		if err != nil {
			t.Fatalf("boost %q: %v", got, err)
		}
		// The rule: 1% a second since admission, in steps of 10%; a
		// second of slack for the two clocks.
		ran := time.Since(admitted.LastTransitionTime.Time) + time.Second
		if allowed := min(int(ran/(10*time.Second))*80, 800); points > allowed {
			t.Fatalf("boost %d after %s running, more than the rate allows (%d)", points, ran.Round(time.Second), allowed)
		}
		if points < 800 {
			return fmt.Errorf("boost %d", points)
		}
		return nil
	})
}
