package multikueue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// A DRA job (each of its 2 trainer nodes claims 2 devices through a
// ResourceClaimTemplate) is dispatched to worker 1, the only worker with
// quota, where a TrainJob of the same name is in the way. Worker 1
// reserves quota for it once and holds it: Kueue's DRA reconcile leaves a
// Workload on hold (Kueue's OnHold) alone, where it cleared a hold of our
// own reason and queued the Workload again, looping it between admitted
// and held. Once worker 2 gets quota, the job runs there and completes.
func TestADispatchedDRAJobBlockedOnAWorkerIsHeldOnceThenRunsOnTheOther(t *testing.T) {
	if !draOn() {
		t.Fatalf("Kueue %s does not count DRA devices: run this test on Kueue v0.18 or later", kueueVersion)
	}
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Second)
	for _, c := range []*cluster{manager, worker1, worker2} {
		createAll(t, c, fixtures.ClaimTemplate(ns, "two-gpus", localcluster.DRADeviceClass, 2),
			fixtures.WithClaim(fixtures.TrainingRuntime(ns, "dra", fixtures.TorchPolicy(2),
				fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Annotations: fixtures.RunFor(10 * time.Second)}),
				fixtures.FromTemplate("two-gpus")))
	}
	theirs := fixtures.TrainJob(ns, "clash", "dra", "")
	theirs.Labels = nil
	theirs.Spec.Suspend = ptr.To(true)
	createAll(t, worker1, theirs)
	reservations := watchReservations(t, worker1, ns)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("quota reservations on %s until the failure, by Workload: %v", worker1.name, reservations())
		}
	})

	tj := fixtures.TrainJob(ns, "clash", "dra", "lq")
	createAll(t, manager, tj)
	wlName := managerWorkload(t, tj)
	saidOnManager(t, tj, worker1.name, "already exists")
	quotaFree(t, worker1, ns)
	// Long enough for Kueue's DRA reconcile and scheduler to have
	// admitted a released copy several times over.
	consistently(t, 20*time.Second, "no quota held on "+worker1.name, func() error {
		if n := admittedOn(t, worker1, ns); n > 0 {
			return fmt.Errorf("%d Workloads reserve quota on %s", n, worker1.name)
		}
		return nil
	})

	setQuota(t, worker2, ns, 8)
	runsOn(t, worker2, tj)
	fixtures.WaitComplete(t, ctx, manager, tj, dispatch)
	if got := reservations(); got[wlName] != 1 {
		t.Errorf("worker 1 reserved quota for %s %d times (all its Workloads: %v), want once: the hold must hold", wlName, got[wlName], got)
	}
}

// watchReservations watches the Workloads of ns on w from now on; what it
// returns stops the watch and says how many times each Workload went from
// holding no quota to holding some. A watch sees every change, where
// polling could miss a quick admit-and-hold.
func watchReservations(t *testing.T, w *cluster, ns string) func() map[string]int {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", w.lc.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: fixtures.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	watcher, err := c.Watch(wctx, &kueue.WorkloadList{}, client.InNamespace(ns))
	if err != nil {
		cancel()
		t.Fatalf("watching Workloads on %s: %v", w.name, err)
	}
	var (
		mu       sync.Mutex
		reserved = map[string]bool{}
		counts   = map[string]int{}
		closed   bool
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ev := range watcher.ResultChan() {
			wl, ok := ev.Object.(*kueue.Workload)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			mu.Lock()
			now := workload.HasQuotaReservation(wl)
			if now && !reserved[wl.Name] {
				counts[wl.Name]++
			}
			reserved[wl.Name] = now
			mu.Unlock()
		}
		mu.Lock()
		closed = wctx.Err() == nil
		mu.Unlock()
	}()
	stop := func() map[string]int {
		cancel()
		watcher.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if closed {
			t.Errorf("the watch of Workloads on %s ended before the test did: the count may miss reservations", w.name)
		}
		return counts
	}
	t.Cleanup(func() { cancel(); watcher.Stop() })
	return stop
}
