package multikueueswitch_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// dispatch bounds how long a job may take from its create on the manager
// to running, or complete, on a worker.
const dispatch = 3 * time.Minute

// The set-up goes from Kueue's built-in integration to ours and back, the
// workers first on the way there and the manager first on the way back,
// while a job runs on worker 1 throughout, one dispatched before the
// switches completes during them, a new job is dispatched every 10 s and a
// server-side dry-run create is sent to the manager every 100 ms, with
// two replicas of trainjob-kueue on every cluster (REPLICAS=2). The
// running job keeps its pods and its Workload; every other job completes; no create is refused by
// trainjob-kueue's webhook, standing by or not, and the only refusals are
// Kueue's own webhook's while Kueue restarts (the window docs/install.md
// names: one Kueue replica here).
func TestTheSetUpSwitchesToOursAndBackWhileJobsAreDispatched(t *testing.T) {
	ns := namespace(t)
	long := fixtures.TrainJob(ns, "long", "long", "lq")
	create(t, manager, long)
	pods := runningOn(t, worker1, long)
	wl := fixtures.WaitWorkload(t, ctx, manager, long)
	setGPUQuota(t, worker2, 16)
	// Dispatched under Kueue's built-in adapter, it completes during the
	// switches: the adapter that takes over syncs its status back.
	crossing := fixtures.TrainJob(ns, "crossing", "medium", "lq")
	create(t, manager, crossing)
	runningOn(t, worker2, crossing)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var probes fixtures.ProbeResults
	var dispatched []*trainer.TrainJob
	wg.Add(2)
	go func() { defer wg.Done(); probes = fixtures.ProbeCreates(ctx, manager, ns, "short", "lq", stop) }()
	go func() { defer wg.Done(); dispatched = dispatchThroughout(t, ns, stop) }()
	switchErr := manager.lc.Switch(ctx, root, localcluster.IntegrationOurs, os.Stderr)
	if switchErr == nil {
		time.Sleep(15 * time.Second) // jobs dispatched under ours, too
		switchErr = manager.lc.Switch(ctx, root, localcluster.IntegrationInTree, os.Stderr)
	}
	time.Sleep(10 * time.Second)
	close(stop)
	wg.Wait()
	if switchErr != nil {
		t.Fatalf("switching: %v", switchErr)
	}

	if got := runningOn(t, worker1, long); !equalPods(got, pods) {
		t.Errorf("long's pods on %s were replaced: %v, were %v", worker1.name, got, pods)
	}
	if got := fixtures.WaitWorkload(t, ctx, manager, long); got.UID != wl.UID || evicted(got) {
		t.Errorf("long's Workload on the manager: %s (uid %s, conditions %v), want %s kept and never evicted", got.Name, got.UID, got.Status.Conditions, wl.Name)
	}
	if len(dispatched) < 4 {
		t.Errorf("only %d jobs were dispatched during the switches, want at least 4", len(dispatched))
	}
	for _, tj := range append(dispatched, crossing) {
		fixtures.WaitComplete(t, ctx, manager, tj, dispatch)
	}
	t.Logf("%d jobs dispatched during the switches, and the one dispatched before them, completed", len(dispatched))
	t.Logf("dry-run creates on the manager: %d, refused: %d (by Kueue's webhook while it restarted: %d)", probes.Sent, len(probes.Refused), probes.Kueues)
	for _, r := range probes.Ours() {
		t.Errorf("a create refused during the switch, not by Kueue's restarting webhook: %s", r.Err)
	}
}

// namespace makes a namespace on every cluster with runtimes "long" (2
// trainer nodes of 4 GPUs each, for an hour), "medium" (the same for a
// minute) and "short" (for 3 s) and LocalQueue "lq": on the manager its ClusterQueue dispatches
// through the MultiKueue check; worker 1 has 8 GPUs of quota (one long
// job) and worker 2 none, both two 8-GPU nodes.
func namespace(t *testing.T) string {
	t.Helper()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "mks-"}}
	create(t, manager, nsObj)
	ns := nsObj.Name
	for _, c := range []*cluster{manager, worker1, worker2} {
		if c != manager {
			create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
		pool := fixtures.Pool{Name: "gpu", Labels: map[string]string{fixtures.PoolLabel: ns}, GPUs: map[*cluster]int64{manager: 64, worker1: 8}[c]}
		flavors, cq, lq := fixtures.Queue(ns, ns, pool)
		if c == manager {
			cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: localcluster.MultiKueueCheck}}}
		} else {
			for i := range 2 {
				if err := localcluster.AddNode(ctx, c, fixtures.Node(fmt.Sprintf("%s-%s-%d", ns, c.name, i), pool, 8)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, f := range flavors {
			create(t, c, f)
		}
		create(t, c, cq, lq,
			fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(2), fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(time.Hour)}),
			fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(2), fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(3 * time.Second)}),
			fixtures.TrainingRuntime(ns, "medium", fixtures.TorchPolicy(2), fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(time.Minute)}))
		fixtures.WaitActive(t, ctx, c, ns, 30*time.Second)
	}
	return ns
}

// create creates objs on c, again while a webhook's informer has not
// seen a runtime yet.
func create(t *testing.T, c *cluster, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		poll.Eventually(t, 30*time.Second, "create "+o.GetName()+" on "+c.name, func() error {
			err := c.Create(ctx, o)
			if err != nil && !fixtures.RuntimeNotCachedYet(err) {
				t.Fatalf("creating %T %s on %s: %v", o, o.GetName(), c.name, err)
			}
			return err
		})
	}
}

// runningOn waits until the job's 2 trainer pods run on w and returns
// their UIDs by name.
func runningOn(t *testing.T, w *cluster, tj *trainer.TrainJob) map[string]types.UID {
	t.Helper()
	uids := map[string]types.UID{}
	poll.Eventually(t, dispatch, tj.Name+" running on "+w.name, func() error {
		pods, err := fixtures.PodsOf(ctx, w, tj, "node")
		if err != nil {
			return err
		}
		clear(uids)
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				uids[p.Name] = p.UID
			}
		}
		if len(uids) != 2 {
			return fmt.Errorf("%d of 2 pods running", len(uids))
		}
		return nil
	})
	return uids
}

func equalPods(a, b map[string]types.UID) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func evicted(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

// setGPUQuota sets the GPUs of the namespace's ClusterQueue on w.
func setGPUQuota(t *testing.T, w *cluster, gpus int64) {
	t.Helper()
	poll.Eventually(t, 30*time.Second, "quota on "+w.name, func() error {
		var cqs kueue.ClusterQueueList
		if err := w.List(ctx, &cqs); err != nil {
			return err
		}
		for _, cq := range cqs.Items {
			if !strings.HasPrefix(cq.Name, "mks-") {
				continue
			}
			res := cq.Spec.ResourceGroups[0].Flavors[0].Resources
			for i := range res {
				if res[i].Name == fixtures.GPU {
					res[i].NominalQuota.Set(gpus)
				}
			}
			if err := w.Update(ctx, &cq); err != nil {
				return err
			}
		}
		return nil
	})
}

// dispatchThroughout creates a short job on the manager every 10 s until
// stop, and returns those the API server took.
func dispatchThroughout(t *testing.T, ns string, stop <-chan struct{}) []*trainer.TrainJob {
	var out []*trainer.TrainJob
	for i := 0; ; i++ {
		select {
		case <-stop:
			return out
		case <-time.After(10 * time.Second):
		}
		tj := fixtures.TrainJob(ns, fmt.Sprintf("during-%d", i), "short", "lq")
		if err := manager.Create(ctx, tj); err != nil {
			t.Logf("creating %s during the switch: %v", tj.Name, err)
			continue
		}
		out = append(out, tj)
	}
}
