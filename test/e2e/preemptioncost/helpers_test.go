package preemptioncost_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// The priorities of the jobs: equal ones that run, and a higher one that
// preempts.
const (
	lowPriority  = 100
	highPriority = 10000
)

// A policy whose progress part alone decides: 800 points at 100%, every
// 10%; and one counting preemptions. The tests compress time: a job here
// may be credited with all its training in a second (maxPercentPerHour
// 360000), where the default credits at most 100% an hour of running
// (TestProgressIsCreditedAtTheRateThePolicySets keeps the rule).
const (
	progressPolicy    = `{"progress":{"points":800,"stepPercent":10,"maxPercentPerHour":360000}}`
	preemptionsPolicy = `{"preemptions":{"points":500,"every":1,"maxPoints":1000}}`
)

// queueOf is a namespace with a ClusterQueue of two 4-GPU nodes, the
// priority classes of its jobs, and runtimes "long" (a 4-GPU trainer
// node that runs for an hour), "init" (a long dataset initializer, then
// that node) and "short" (the high-priority node, done in seconds). policy
// "" leaves the ClusterQueue without one.
func queueOf(t *testing.T, policy string) (ns, lq string) {
	t.Helper()
	return queueOfNodes(t, policy, 2)
}

// queueOfNodes is queueOf with nodes 4-GPU nodes.
func queueOfNodes(t *testing.T, policy string, nodes int) (ns, lq string) {
	t.Helper()
	ns, lq = fixtures.NamespaceWithQueue(t, ctx, k8s, "cost", nodes, 4)
	if policy != "" {
		setPolicy(t, ns, policy)
	}
	for name, value := range map[string]int32{ns + "-low": lowPriority, ns + "-high": highPriority} {
		fixtures.Create(t, ctx, k8s, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	fixtures.Create(t, ctx, k8s,
		fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Priority: ns + "-low", Annotations: fixtures.RunFor(time.Hour)}),
		fixtures.TrainingRuntime(ns, "init", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Priority: ns + "-low", Annotations: fixtures.RunFor(time.Hour)},
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Priority: ns + "-low", DependsOn: []string{"dataset-initializer"}, Annotations: fixtures.RunFor(time.Hour)}),
		fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Priority: ns + "-high", Annotations: fixtures.RunFor(3 * time.Second)}))
	return ns, lq
}

// setPolicy sets (or, for "", removes) the ClusterQueue's policy.
func setPolicy(t *testing.T, cq, policy string) {
	t.Helper()
	if err := annotatePolicy(cq, policy); err != nil {
		t.Fatal(err)
	}
}

// annotatePolicy writes the ClusterQueue's policy as an admin's kubectl
// annotate does ("" removes it).
func annotatePolicy(cq, policy string) error {
	value := "null"
	if policy != "" {
		value = strconv.Quote(policy)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, names.PreemptionCostAnnotation, value)
	return k8s.Patch(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}}, client.RawPatch(types.MergePatchType, patch))
}

// running waits for tj's trainer pods to run.
func running(t *testing.T, tj *trainer.TrainJob) {
	t.Helper()
	fixtures.WaitRunning(t, ctx, k8s, tj)
}

// boostOf is the boost on tj's Workload, "" when none.
func boostOf(t *testing.T, tj *trainer.TrainJob) string {
	t.Helper()
	return fixtures.WaitWorkload(t, ctx, k8s, tj).Annotations[constants.PriorityBoostAnnotationKey]
}

// waitBoost waits until tj's Workload has boost want ("" for none).
func waitBoost(t *testing.T, tj *trainer.TrainJob, want string) {
	t.Helper()
	poll.Eventually(t, time.Minute, fmt.Sprintf("%s boosted %q", tj.Name, want), func() error {
		if got := boostOf(t, tj); got != want {
			return fmt.Errorf("boost %q", got)
		}
		return nil
	})
}

// preempted waits until exactly one of jobs is evicted for preemption and
// returns it.
func preempted(t *testing.T, jobs ...*trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	var victim *trainer.TrainJob
	poll.Eventually(t, 2*time.Minute, "a victim", func() error {
		victim = nil
		for _, tj := range jobs {
			if preemptcost.Preemptions(fixtures.WaitWorkload(t, ctx, k8s, tj)) > 0 {
				if victim != nil {
					t.Fatalf("both %s and %s preempted for one job", victim.Name, tj.Name)
				}
				victim = tj
			}
		}
		if victim == nil {
			return fmt.Errorf("none preempted yet")
		}
		return nil
	})
	return victim
}

// succeed reports tj's trainer pods Succeeded, as their kubelet would.
func succeedUntilComplete(t *testing.T, tj *trainer.TrainJob) {
	t.Helper()
	// Marked again until the job completes: on a loaded machine the pods
	// may not all exist yet when first listed, and kwok's own stage may
	// still set a pod Running after our Succeeded.
	poll.Eventually(t, 2*time.Minute, tj.Name+" complete once its pods succeed", func() error {
		got := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			return err
		}
		if apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobComplete) {
			return nil
		}
		pods, err := fixtures.PodsOf(ctx, k8s, tj, "node")
		if err != nil {
			return err
		}
		if len(pods) == 0 {
			return fmt.Errorf("no pods of role node yet")
		}
		for i := range pods {
			if pods[i].Status.Phase == corev1.PodSucceeded {
				continue
			}
			patch := []byte(`{"status":{"phase":"Succeeded","conditions":[{"type":"Ready","status":"False","reason":"PodCompleted"}]}}`)
			if err := k8s.Status().Patch(ctx, &pods[i], client.RawPatch(types.StrategicMergePatchType, patch)); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
		return fmt.Errorf("its pods marked Succeeded, the job not complete yet: conditions %v", got.Status.Conditions)
	})
}

// clusterQueue is the ClusterQueue NamespaceWithQueue made for ns.
func clusterQueue(ns string) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: ns}}
}

// setQuota gives the ClusterQueue of ns gpus GPUs.
func setQuota(t *testing.T, ns string, gpus int64) {
	t.Helper()
	poll.Eventually(t, 30*time.Second, "quota set", func() error {
		cq := clusterQueue(ns)
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cq), cq); err != nil {
			return err
		}
		for i, r := range cq.Spec.ResourceGroups[0].Flavors[0].Resources {
			if r.Name == fixtures.GPU {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[i].NominalQuota = *resource.NewQuantity(gpus, resource.DecimalSI)
			}
		}
		return k8s.Update(ctx, cq)
	})
}

// killManager kills trainjob-kueue (SIGKILL, no standby) and returns what
// starts it again; the test's cleanup starts it if the test did not.
func killManager(t *testing.T) (start func()) {
	t.Helper()
	if err := cluster.Kill("trainjob-kueue"); err != nil {
		t.Fatal(err)
	}
	started := false
	t.Cleanup(func() {
		if !started {
			_ = cluster.Start(ctx, "trainjob-kueue")
		}
	})
	return func() {
		t.Helper()
		if err := cluster.Start(ctx, "trainjob-kueue"); err != nil {
			t.Fatal(err)
		}
		started = true
	}
}
