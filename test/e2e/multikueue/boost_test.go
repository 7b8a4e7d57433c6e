package multikueue_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// The progress policy of the single-cluster test, time compressed the
// same way (test/e2e/preemptioncost).
const workerPolicy = `{"progress":{"points":800,"stepPercent":10,"maxPercentPerHour":360000}}`

// A worker ClusterQueue's preemption-cost policy boosts the jobs MultiKueue
// dispatched there (their prebuilt Workloads, named by the manager), and
// flips the worker's victim as on one cluster: A admitted first at 10%, B
// second at 90%, a higher-priority job dispatched to the full worker.
// Kueue alone preempts B, the most recently admitted; under the worker's
// policy it preempts A.
func TestAWorkerPolicyBoostsTheJobsDispatchedThereAndFlipsTheVictim(t *testing.T) {
	if !priorityBoostOn() {
		t.Fatalf("Kueue %s has no PriorityBoost gate: run this test on Kueue v0.17 or later", kueueVersion)
	}
	for name, tc := range map[string]struct {
		policy string
		victim string
	}{
		"without a policy":         {victim: "b"},
		"with the worker's policy": {policy: workerPolicy, victim: "a"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Second)
			priorityRuntimes(t, ns)
			if tc.policy != "" {
				annotateQueue(t, worker1, ns, tc.policy)
			}
			a, b := fixtures.TrainJob(ns, "a", "long", "lq"), fixtures.TrainJob(ns, "b", "long", "lq")
			for _, tj := range []*trainer.TrainJob{a, b} {
				createAll(t, manager, tj)
				podsRunOn(t, worker1, tj, 1)
			}
			fixtures.ReportProgress(t, ctx, worker1, a, 10)
			fixtures.ReportProgress(t, ctx, worker1, b, 90)
			if tc.policy != "" {
				boostedOn(t, worker1, a, "80")
				boostedOn(t, worker1, b, "720")
			}
			high := fixtures.TrainJob(ns, "high", "short", "lq")
			createAll(t, manager, high)
			if got := evictedOnManager(t, a, b); got.Name != tc.victim {
				t.Fatalf("%s preempted on %s, want %s", got.Name, worker1.name, tc.victim)
			}
			fixtures.WaitComplete(t, ctx, manager, high, dispatch)
		})
	}
}

// A worker ClusterQueue's preemption notice cannot hold for a job
// MultiKueue dispatched there: the manager cluster's Kueue answers the
// eviction of the worker's Workload by deleting the job from the worker
// within seconds (measured: 1.2 s). So the job is stopped at once, as
// without a notice, and told why on the worker instead of being promised
// a time it does not get; it is queued again on the manager and runs once
// the arrival that preempted it is done. Not parallel: the suite's
// parallel tests run after its lost-worker test, which leaves worker1
// without an API server.
func TestAWorkersNoticeIsNotPromisedToADispatchedJob(t *testing.T) {
	ns := setUp(t, capacity{quotaGPUs: 4, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Second)
	priorityRuntimes(t, ns)
	annotateQueue(t, worker1, ns, `{"notice":{"seconds":300}}`)
	victim := fixtures.TrainJob(ns, "victim", "long", "lq")
	createAll(t, manager, victim)
	podsRunOn(t, worker1, victim, 1)
	arrival := fixtures.TrainJob(ns, "arrival", "short", "lq")
	createAll(t, manager, arrival)

	eventually(t, dispatch, "the victim told on "+worker1.name+" that no notice holds there", func() error {
		return fixtures.EventOn(ctx, worker1, victim, "PreemptionNoticeNotHeld", "dispatched here by MultiKueue")
	})
	if err := fixtures.EventOn(ctx, worker1, victim, "PreemptionNotice", "lets it run until"); err == nil {
		t.Errorf("the victim on %s was promised a notice", worker1.name)
	}
	fixtures.WaitComplete(t, ctx, manager, arrival, dispatch)
	podsRunOn(t, worker1, victim, 1)
}

// priorityBoostOn: the workers' Kueue honours the boost (suite_test.go
// turns its gate on from v0.17).
func priorityBoostOn() bool { return kueueVersion == "" || kueueVersion >= "v0.17" }

// priorityRuntimes makes, on every cluster, the priority classes and the
// runtimes of the preemption test: "long" (a 4-GPU node of low priority
// that runs for an hour) and "short" (a 4-GPU node of high priority).
func priorityRuntimes(t *testing.T, ns string) {
	t.Helper()
	for _, c := range []*cluster{manager, worker1, worker2} {
		createAll(t, c,
			&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-low"}, Value: 100},
			&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}, Value: 10000},
			fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(1),
				fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Priority: ns + "-low", Annotations: fixtures.RunFor(time.Hour)}),
			fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(1),
				fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Priority: ns + "-high", Annotations: fixtures.RunFor(3 * time.Second)}))
		t.Cleanup(func() {
			for _, pc := range []string{ns + "-low", ns + "-high"} {
				_ = c.Delete(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc}})
			}
		})
	}
}

func annotateQueue(t *testing.T, c *cluster, cq, policy string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, names.PreemptionCostAnnotation, strconv.Quote(policy))
	if err := c.Patch(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// podsRunOn waits for n pods of tj running on w.
func podsRunOn(t *testing.T, w *cluster, tj *trainer.TrainJob, n int) {
	t.Helper()
	eventually(t, dispatch, fmt.Sprintf("%s's %d pods running on %s", tj.Name, n, w.name), func() error {
		running, err := runningOn(w, tj)
		if err != nil {
			return err
		}
		if running != n {
			return fmt.Errorf("%d running; %s", running, dispatchState(tj))
		}
		return nil
	})
}

// runningOn counts tj's running pods on w.
func runningOn(w *cluster, tj *trainer.TrainJob) (int, error) {
	var pods corev1.PodList
	if err := w.List(ctx, &pods, client.InNamespace(tj.Namespace), client.MatchingLabels{"jobset.sigs.k8s.io/jobset-name": tj.Name}); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			n++
		}
	}
	return n, nil
}

// boostedOn waits until the Workload w runs tj against (the manager's
// prebuilt one) carries boost want.
func boostedOn(t *testing.T, w *cluster, tj *trainer.TrainJob, want string) {
	t.Helper()
	name := managerWorkload(t, tj)
	eventually(t, time.Minute, fmt.Sprintf("%s boosted %s on %s", tj.Name, want, w.name), func() error {
		wl := &kueue.Workload{}
		if err := w.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: name}, wl); err != nil {
			return err
		}
		if got := wl.Annotations[constants.PriorityBoostAnnotationKey]; got != want {
			return fmt.Errorf("boost %q", got)
		}
		return nil
	})
}

// evictedOnManager waits until exactly one of jobs lost its place on the
// worker: MultiKueue evicts its Workload on the manager to queue it again.
func evictedOnManager(t *testing.T, jobs ...*trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	var victim *trainer.TrainJob
	eventually(t, dispatch, "a victim", func() error {
		victim = nil
		for _, tj := range jobs {
			wl := &kueue.Workload{}
			if err := manager.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: managerWorkload(t, tj)}, wl); err != nil {
				return err
			}
			evicted := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted) != nil ||
				(wl.Status.SchedulingStats != nil && len(wl.Status.SchedulingStats.Evictions) > 0)
			if evicted {
				if victim != nil {
					t.Fatalf("both %s and %s evicted for one job", victim.Name, tj.Name)
				}
				victim = tj
			}
		}
		if victim == nil {
			return fmt.Errorf("none evicted yet")
		}
		return nil
	})
	return victim
}
