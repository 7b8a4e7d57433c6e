package preemptioncost_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// The anti-cascade rule with trainjob-kueue down across the eviction:
// three boosted jobs fill the queue, trainjob-kueue stops (a crashed
// leader, no standby), and Kueue, alone, preempts the cheapest for an
// arrival of higher priority. The victim's preemption is counted while
// nobody is there to take its boost back; once trainjob-kueue is back, it
// stops the victim and starts the arrival, and the victim, queued again,
// never preempts a peer. Not parallel: it stops the suite's manager.
func TestAnEvictionWhileTrainJobKueueIsDownCascadesNot(t *testing.T) {
	ns, lq := queueOfNodes(t, `{"progress":{"points":1000,"stepPercent":5,"maxPercentPerHour":360000},"preemptions":{"points":3000,"every":1,"maxPoints":3000}}`, 3)
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
	// The arrival is created while trainjob-kueue's webhook answers, on a
	// LocalQueue not there yet: it waits without a reservation.
	high := classed(fixtures.TrainJob(ns, "high", "arrival", "later"), "-whigh")
	fixtures.Create(t, ctx, k8s, high)
	poll.Eventually(t, time.Minute, "the arrival's Workload", func() error { _, err := fixtures.WorkloadOf(ctx, k8s, high); return err })
	pods := map[string][]string{"a": podUIDs(t, jobs["a"]), "c": podUIDs(t, jobs["c"])}

	start := killManager(t)
	fixtures.Create(t, ctx, k8s, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(ns)}})
	if victim := preempted(t, jobs["a"], jobs["b"], jobs["c"]); victim.Name != "b" {
		t.Fatalf("%s preempted, want b, the cheapest", victim.Name)
	}
	// Nobody stops b while trainjob-kueue is down: it keeps its
	// reservation, its preemption counted.
	poll.Consistently(t, 10*time.Second, "b evicted, not yet stopped", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, jobs["b"]); !workload.HasQuotaReservation(wl) {
			return fmt.Errorf("b's reservation went back with nobody to stop it: %v", wl.Status.Conditions)
		}
		return nil
	})

	start()
	poll.Eventually(t, 2*time.Minute, "b stopped and queued again", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, jobs["b"]); workload.HasQuotaReservation(wl) {
			return fmt.Errorf("still reserved: %v", wl.Status.Conditions)
		}
		return nil
	})
	poll.Consistently(t, 30*time.Second, "a and c keep running", func() error {
		for _, name := range []string{"a", "c"} {
			if n := preemptcost.Preemptions(fixtures.WaitWorkload(t, ctx, k8s, jobs[name])); n != 0 {
				t.Fatalf("%s preempted too (%d): one arrival stopped more than one job", name, n)
			}
			if got := podUIDs(t, jobs[name]); !slices.Equal(got, pods[name]) {
				t.Fatalf("%s runs on other pods now (%v, was %v): it was stopped", name, got, pods[name])
			}
		}
		if wl := fixtures.WaitWorkload(t, ctx, k8s, jobs["b"]); !workload.HasQuotaReservation(wl) && wl.Annotations[constants.PriorityBoostAnnotationKey] != "" && wl.Annotations[constants.PriorityBoostAnnotationKey] != "0" {
			t.Fatalf("b waits again boosted %s: it could preempt a peer", wl.Annotations[constants.PriorityBoostAnnotationKey])
		}
		return nil
	})
	fixtures.WaitComplete(t, ctx, k8s, high, 2*time.Minute)
	poll.Eventually(t, 2*time.Minute, "b admitted again", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, jobs["b"]); !workload.IsAdmitted(wl) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		return nil
	})
}
