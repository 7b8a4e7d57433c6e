package recovery_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// kueue#14811's class. A running job loses a pod that can't come back
// (its nodes cordoned) for longer than waitForPodsReady.recoveryTimeout:
// Kueue evicts it with PodsReadyTimeout, the job is stopped and its quota
// released, and a job waiting in the same ClusterQueue gets that quota.
// While the evicted job waits behind it the manager is quiet (no hot loop
// on an evicted job, kueue#15652's class); once the quota is free again
// the evicted job runs whole.
func TestRecoveryTimeoutEvictionGivesTheQuotaToAWaitingJob(t *testing.T) {
	ns, lq := fixtures.NamespaceWithQueue(t, ctx, k8s, "recovery", 2, 4)
	create(t,
		fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(2),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(time.Hour)}),
	)
	running := fixtures.TrainJob(ns, "running", "long", lq)
	create(t, running)
	poll.Eventually(t, 2*time.Minute, "running whole and ready", func() error {
		if n := runningPods(t, running); n != 2 {
			return fmt.Errorf("%d of 2 pods running", n)
		}
		wl, _ := fixtures.WorkloadOf(ctx, k8s, running)
		if !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady) {
			return fmt.Errorf("not PodsReady: %v", wl.Status.Conditions)
		}
		return nil
	})
	waiting := fixtures.TrainJob(ns, "waiting", "long", lq)
	create(t, waiting)
	poll.Eventually(t, 30*time.Second, "the second job waits for quota", func() error {
		wl, err := fixtures.WorkloadOf(ctx, k8s, waiting)
		if err != nil || apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved) == nil {
			return fmt.Errorf("no QuotaReserved condition yet")
		}
		if workload.HasQuotaReservation(wl) {
			t.Fatalf("admitted beside a job holding all the quota: %v", wl.Status.Conditions)
		}
		return nil
	})

	// A node's worth of capacity goes: no replacement pod can start.
	nodes := poolNodes(t, ns)
	for _, n := range nodes {
		setUnschedulable(t, n, true)
	}
	lost := pods(t, running, "node")[0]
	if err := k8s.Delete(ctx, &lost); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, recoveryTimeout+time.Minute, "evicted for PodsReadyTimeout", func() error {
		wl, _ := fixtures.WorkloadOf(ctx, k8s, running)
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.WorkloadEvictedByPodsReadyTimeout {
			return fmt.Errorf("not evicted for PodsReadyTimeout: %v", wl.Status.Conditions)
		}
		return nil
	})
	// Capacity returns at once: the waiting job, admitted on the released
	// quota, starts once the evicted job's pods are gone.
	for _, n := range nodes {
		setUnschedulable(t, n, false)
	}
	poll.Eventually(t, time.Minute, "stopped, its quota released to the waiting job", func() error {
		got := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(running), got); err != nil {
			return err
		}
		if !ptr.Deref(got.Spec.Suspend, false) {
			return fmt.Errorf("the evicted job is not suspended")
		}
		if wl, _ := fixtures.WorkloadOf(ctx, k8s, running); workload.HasQuotaReservation(wl) {
			return fmt.Errorf("the evicted job still holds quota: %v", wl.Status.Conditions)
		}
		if wl, _ := fixtures.WorkloadOf(ctx, k8s, waiting); !workload.HasQuotaReservation(wl) {
			return fmt.Errorf("the waiting job has no quota: %v", wl.Status.Conditions)
		}
		return nil
	})

	// The waiting job runs on the released quota, and the evicted job
	// waits behind it.
	poll.Eventually(t, 2*time.Minute, "the waiting job runs whole and ready", func() error {
		if n := runningPods(t, waiting); n != 2 {
			return fmt.Errorf("%d of 2 pods running\n%s", n, describe(t, ns, waiting, running))
		}
		// Ready: no eviction of its own can come while the manager is
		// watched.
		if wl, _ := fixtures.WorkloadOf(ctx, k8s, waiting); !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady) {
			return fmt.Errorf("not PodsReady: %v", wl.Status.Conditions)
		}
		return nil
	})
	// While the evicted job waits, the manager is quiet.
	localcluster.AssertQuiet(t, cluster.AuditLog(), idleWindow, idleBound)

	for _, p := range pods(t, waiting, "node") {
		succeed(t, &p)
	}
	waitComplete(t, waiting, 2*time.Minute)
	poll.Eventually(t, 2*time.Minute, "the evicted job runs whole again", func() error {
		if n := runningPods(t, running); n != 2 {
			return fmt.Errorf("%d of 2 pods running", n)
		}
		return nil
	})
}

// describe is what a failed wait needs to be understood once the cluster
// is gone: each job's Workload conditions and every pod of the namespace
// with its phase, node and deletion.
func describe(t *testing.T, ns string, jobs ...*trainer.TrainJob) string {
	t.Helper()
	var b strings.Builder
	for _, tj := range jobs {
		wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", tj.Name, err)
			continue
		}
		fmt.Fprintf(&b, "%s: Workload %s active=%t\n", tj.Name, wl.Name, ptr.Deref(wl.Spec.Active, true))
		for _, c := range wl.Status.Conditions {
			fmt.Fprintf(&b, "  %s=%s %s: %s (%s)\n", c.Type, c.Status, c.Reason, c.Message, c.LastTransitionTime.Format(time.TimeOnly))
		}
	}
	var list corev1.PodList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return b.String() + "pods: " + err.Error()
	}
	for _, p := range list.Items {
		deleted := ""
		if p.DeletionTimestamp != nil {
			deleted = " deleting since " + p.DeletionTimestamp.Format(time.TimeOnly)
		}
		fmt.Fprintf(&b, "pod %s %s node=%q gates=%d%s\n", p.Name, p.Status.Phase, p.Spec.NodeName, len(p.Spec.SchedulingGates), deleted)
	}
	return b.String()
}

// The hot-loop bound of the reliability tier: 60 s of idle, at most 20
// requests besides the leader lease.
const (
	idleWindow = 60 * time.Second
	idleBound  = 20
)

// succeed reports pod Succeeded, as its kubelet would.
func succeed(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	patch := []byte(`{"status":{"phase":"Succeeded","conditions":[{"type":"Ready","status":"False","reason":"PodCompleted"}]}}`)
	if err := k8s.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		t.Fatalf("pod %s succeeded: %v", pod.Name, err)
	}
}

func runningPods(t *testing.T, tj *trainer.TrainJob) int {
	t.Helper()
	n := 0
	for _, p := range pods(t, tj, "node") {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// poolNodes are the nodes setUp made for namespace ns.
func poolNodes(t *testing.T, ns string) []corev1.Node {
	t.Helper()
	var list corev1.NodeList
	if err := k8s.List(ctx, &list, client.MatchingLabels{fixtures.PoolLabel: ns}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatal("no nodes")
	}
	return list.Items
}

func setUnschedulable(t *testing.T, n corev1.Node, cordoned bool) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, cordoned)
	if err := k8s.Patch(ctx, &n, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

func waitComplete(t *testing.T, tj *trainer.TrainJob, timeout time.Duration) {
	t.Helper()
	poll.Eventually(t, timeout, tj.Name+" complete", func() error {
		got := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			return err
		}
		if apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobFailed) {
			t.Fatalf("%s failed: %v", tj.Name, got.Status.Conditions)
		}
		if !apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobComplete) {
			return fmt.Errorf("conditions %v", got.Status.Conditions)
		}
		return nil
	})
}

func create(t *testing.T, objs ...client.Object) { fixtures.Create(t, ctx, k8s, objs...) }

func pods(t *testing.T, tj *trainer.TrainJob, role string) []corev1.Pod {
	t.Helper()
	list, err := fixtures.PodsOf(ctx, k8s, tj, role)
	if err != nil {
		t.Fatal(err)
	}
	return list
}
