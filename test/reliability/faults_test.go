package reliability_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// The fault tier: the manager SIGKILLed at each step of an admission, and
// during a burst together with a restart of the API server. Afterwards
// judge reads every version of every job the API server held.

// faultCluster is a namespace with one GPU pool its queue admits to, and
// decoy nodes outside every flavor that only tolerate the runtime: a pod
// started without its flavor's placement can run there, and judge sees it.
type faultCluster struct {
	ns      string
	lq      string
	cq      *kueue.ClusterQueue
	flavors map[string]map[string]string
}

func newFaultCluster(t *testing.T, pools ...string) *faultCluster {
	t.Helper()
	ns := namespace(t)
	fc := &faultCluster{ns: ns, flavors: map[string]map[string]string{}}
	var ps []fixtures.Pool
	for _, name := range pools {
		p := gpuPool(ns, name, 8)
		nodesOf(t, ns, p, 1, 8)
		ps = append(ps, p)
		fc.flavors[ns+"-"+name] = p.Labels
	}
	decoy := gpuPool(ns, "decoy", 8)
	decoy.Taints = nil
	nodesOf(t, ns, decoy, 1, 8)
	fc.lq, fc.cq = queue(t, ns, ps...)
	return fc
}

// job is a TrainJob of the namespace's torch runtime, with an entry of
// its user's.
func (fc *faultCluster) job(name string, labels map[string]string) *unstructured.Unstructured {
	return fc.jobOf(name, "torch", labels)
}

func (fc *faultCluster) jobOf(name, runtime string, labels map[string]string) *unstructured.Unstructured {
	tj := fixtures.TrainJob(fc.ns, name, runtime, fc.lq)
	for k, v := range labels {
		tj.Labels[k] = v
	}
	return withEntries(tj, userEntry("node", name))
}

// managerRestarted starts the manager the test killed, as its Deployment
// would. The dead manager's leader lease would hold its successor back for
// up to its 15 s duration; the test deletes it instead of waiting (the
// holder is dead: no two leaders).
func managerRestarted(t *testing.T) {
	t.Helper()
	if cluster.Running("trainjob-kueue") {
		t.Fatal("the manager is running: nothing to restart")
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: leaseNamespace, Name: leaseName}}
	if err := k8s.Delete(ctx, lease); client.IgnoreNotFound(err) != nil {
		t.Fatalf("deleting the dead manager's lease: %v", err)
	}
	if err := cluster.Start(ctx, "trainjob-kueue"); err != nil {
		t.Fatalf("restarting the manager: %v", err)
	}
}

// crashManager SIGKILLs the manager.
func crashManager(t *testing.T) {
	t.Helper()
	if err := cluster.Crash("trainjob-kueue"); err != nil {
		t.Fatal(err)
	}
}

// The manager's leader lease on the local cluster.
const (
	leaseNamespace = "trainjob-kueue-system"
	leaseName      = "trainjob-kueue.dev"
)

// leaderElected waits until a manager started after since holds the leader
// lease: a SIGKILLed one leaves the lease to expire, and its successor
// waits.
func leaderElected(since time.Time) error {
	err := poll.Until(90*time.Second, func() error {
		lease := &coordinationv1.Lease{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: leaseName}, lease); err != nil {
			return err
		}
		if lease.Spec.RenewTime == nil || time.Since(lease.Spec.RenewTime.Time) >= 3*time.Second ||
			lease.Spec.AcquireTime == nil || !lease.Spec.AcquireTime.After(since) {
			return fmt.Errorf("held by %s, acquired %v, renewed %v", ptr.Deref(lease.Spec.HolderIdentity, "nobody"), lease.Spec.AcquireTime, lease.Spec.RenewTime)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("no manager started after %s took the leader lease within 90s: %w", since.Format(time.RFC3339), err)
	}
	return nil
}

// report logs what judge saw.
func report(t *testing.T, js []judged) {
	for _, j := range js {
		t.Logf("%s: %d versions held by the API server, %d of them unsuspended", j.name, j.versions, j.started)
	}
}

func setHold(t *testing.T, cq *kueue.ClusterQueue, policy kueue.StopPolicy) {
	t.Helper()
	eventually(t, time.Minute, "stopPolicy "+string(policy), func() error {
		got := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cq), got); err != nil {
			return err
		}
		got.Spec.StopPolicy = ptr.To(policy)
		return k8s.Update(ctx, got)
	})
}

// The manager dies the moment the job's Workload exists; Kueue admits it
// while the manager is down; the restarted manager starts it.
func TestManagerKilledOnceTheWorkloadExistsAndAdmittedWhileDown(t *testing.T) {
	fc := newFaultCluster(t, "gpu")
	create(t, torchRuntime(fc.ns, "torch", 8, 3*time.Second))
	setHold(t, fc.cq, kueue.Hold)
	job := fc.job("held", nil)
	create(t, job)
	var wl kueue.Workload
	eventually(t, time.Minute, "Workload created", func() error {
		wls := workloadsOf(t, fc.ns, string(job.GetUID()))
		if len(wls) == 0 {
			return fmt.Errorf("no Workload yet")
		}
		wl = wls[0]
		return nil
	})
	crashManager(t)
	if workload.HasQuotaReservation(&wl) {
		t.Fatalf("the held ClusterQueue reserved quota: %v", wl.Status.Conditions)
	}
	setHold(t, fc.cq, kueue.None)
	eventually(t, time.Minute, "admitted while the manager is down", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&wl), &wl); err != nil {
			return err
		}
		if !workload.IsAdmitted(&wl) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		return nil
	})
	consistently(t, 3*time.Second, "nobody starts the job while the manager is down", func() error {
		if got := getJob(t, fc.ns, "held"); !ptr.Deref(got.Spec.Suspend, false) {
			return fmt.Errorf("unsuspended with the manager down")
		}
		return nil
	})
	managerRestarted(t)
	waitComplete(t, fc.ns, "held", 3*time.Minute)
	report(t, judge(t, fc.ns, []string{"node"}, fc.flavors))
}

// The manager dies on each write of the start: the injection, and the
// unsuspend (Trainer v2.1 takes them as two requests: killed between
// them, the job is held injected and suspended; Trainer v2.2.1+ takes one,
// and the job is held as before the start).
func TestManagerKilledAtEachWriteOfTheStart(t *testing.T) {
	fc := newFaultCluster(t, "gpu")
	create(t, torchRuntime(fc.ns, "torch", 8, 2*time.Second))
	w := theTripwire(t)
	for _, step := range []struct {
		name string
		when func(string) func(old, new *unstructured.Unstructured) bool
		// injectedAndSuspended: the API server must hold the job with the
		// admission's entries and suspended (between inject and
		// unsuspend), where the release takes two requests.
		injectedAndSuspended bool
	}{
		{name: "inject", when: injectsInto},
		{name: "unsuspend", when: startsJob, injectedAndSuspended: overrides == "spec.podTemplateOverrides"},
	} {
		name := "at-" + step.name
		w.arm(step.name+" of "+name, step.when(name))
		create(t, fc.job(name, nil))
		w.wait(t, 2*time.Minute)
		held := &unstructured.Unstructured{}
		held.SetGroupVersionKind(fc.job(name, nil).GroupVersionKind())
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: fc.ns, Name: name}, held); err != nil {
			t.Fatal(err)
		}
		_, ours := entries(held)
		if !isSuspended(held) {
			t.Errorf("%s: unsuspended although the write that starts it was refused", name)
		}
		if step.injectedAndSuspended && len(ours) == 0 {
			t.Errorf("%s: the manager was killed on its unsuspend, but the job holds no injected entries: the step was not between inject and unsuspend", name)
		}
		managerRestarted(t)
		waitComplete(t, fc.ns, name, 3*time.Minute)
	}
	report(t, judge(t, fc.ns, []string{"node"}, fc.flavors))
}

// A running job is preempted; the manager dies on the write that stops it
// (the Workload evicted, the job still running). The restarted manager
// stops it, the preemptor runs, the preempted job is admitted again and
// completes.
func TestManagerKilledMidEviction(t *testing.T) {
	fc := newFaultCluster(t, "gpu")
	// The victim runs long enough to be preempted while it runs.
	create(t, torchRuntime(fc.ns, "torch", 8, 3*time.Second), torchRuntime(fc.ns, "long", 8, 40*time.Second))
	low, high := fc.ns+"-low", fc.ns+"-high"
	for name, value := range map[string]int32{low: 10, high: 1000} {
		create(t, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	const classLabel = "kueue.x-k8s.io/priority-class"
	create(t, fc.jobOf("victim", "long", map[string]string{classLabel: low}))
	eventually(t, 2*time.Minute, "victim running", func() error {
		pods, err := fixtures.PodsOf(ctx, k8s, fixtures.TrainJob(fc.ns, "victim", "", ""), "node")
		if err != nil {
			return err
		}
		if len(pods) == 0 || pods[0].Status.Phase != "Running" {
			return fmt.Errorf("%d pods", len(pods))
		}
		return nil
	})
	w := theTripwire(t)
	w.arm("stop of victim", stopsJob("victim"))
	create(t, fc.job("preemptor", map[string]string{classLabel: high}))
	w.wait(t, 2*time.Minute)
	victim := getJob(t, fc.ns, "victim")
	if ptr.Deref(victim.Spec.Suspend, false) {
		t.Errorf("victim suspended although the write that stops it was refused")
	}
	wls := workloadsOf(t, fc.ns, string(victim.UID))
	if len(wls) != 1 || !apimeta.IsStatusConditionTrue(wls[0].Status.Conditions, kueue.WorkloadEvicted) {
		t.Errorf("victim's Workload not evicted when its stop was cut: %v", wls)
	}
	managerRestarted(t)
	waitComplete(t, fc.ns, "preemptor", 3*time.Minute)
	waitComplete(t, fc.ns, "victim", 3*time.Minute)
	report(t, judge(t, fc.ns, []string{"node"}, fc.flavors))
}

// A burst of jobs over two flavors, the manager SIGKILLed and restarted
// every few seconds through it, and the API server once.
func TestBurstThroughManagerCrashesAndAnAPIServerRestart(t *testing.T) {
	fc := newFaultCluster(t, "a", "b")
	create(t, torchRuntime(fc.ns, "torch", 8, 2*time.Second))
	const jobs = 12
	chaosDone := make(chan error, 1)
	var mu sync.Mutex
	var chaos []string
	go func() {
		chaosDone <- func() error {
			var managerStart time.Time
			for _, what := range []string{"trainjob-kueue", "kube-apiserver", "trainjob-kueue", "trainjob-kueue"} {
				// Each crash hits a manager at work: the one started last
				// holds the leader lease, and has had a few seconds.
				if err := leaderElected(managerStart); err != nil {
					return err
				}
				time.Sleep(3 * time.Second)
				if what == "trainjob-kueue" {
					managerStart = time.Now()
				}
				if err := cluster.Restart(ctx, what); err != nil {
					return fmt.Errorf("restarting %s: %w", what, err)
				}
				mu.Lock()
				chaos = append(chaos, what)
				mu.Unlock()
				if what == "kube-apiserver" {
					// Components whose leader lease lapsed while the API
					// server was away exit: started again, as their
					// kubelet would.
					for _, c := range cluster.Components() {
						if !cluster.Running(c) {
							if err := cluster.Start(ctx, c); err != nil {
								return fmt.Errorf("restarting %s after the API server's restart: %w", c, err)
							}
							mu.Lock()
							chaos = append(chaos, c+" (exited while the API server was away)")
							mu.Unlock()
						}
					}
				}
			}
			return nil
		}()
	}()
	for i := range jobs {
		create(t, fc.job(fmt.Sprintf("burst-%02d", i), nil))
		time.Sleep(time.Second)
	}
	if err := <-chaosDone; err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted, in order: %v", chaos)
	for i := range jobs {
		waitComplete(t, fc.ns, fmt.Sprintf("burst-%02d", i), 5*time.Minute)
	}
	js := judge(t, fc.ns, []string{"node"}, fc.flavors)
	report(t, js)
	if !slices.Contains(chaos, "kube-apiserver") {
		t.Errorf("the API server was not restarted")
	}
}
