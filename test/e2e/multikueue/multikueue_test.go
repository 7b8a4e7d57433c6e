package multikueue_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
)

const (
	ourUser = "system:serviceaccount:trainjob-kueue-system:trainjob-kueue-controller-manager"
	// dispatch is how long a job may take from creation on the manager to
	// running pods on a worker, through two Kueues. Usually under 20 s;
	// twice in CI it took more than 2 minutes (not yet understood), so the
	// margin is wide.
	dispatch = 4 * time.Minute
)

var (
	eventually   = poll.Eventually
	consistently = poll.Consistently
)

// capacity of one worker for a test: quota and nodes of its GPU pool.
type capacity struct {
	quotaGPUs int64
	nodes     int
}

func pool(ns string, gpus int64) fixtures.Pool {
	return fixtures.Pool{Name: "gpu", Labels: map[string]string{"e2e.trainjob-kueue.dev/pool": ns}, GPUs: gpus}
}

// setUp makes a namespace on every cluster with the same runtime and
// LocalQueue "lq": on the manager its ClusterQueue dispatches through the
// MultiKueue check, on each worker it has the given quota and 8-GPU nodes.
// The runtime's trainer role is 2 nodes × 4 GPUs that run for run.
func setUp(t *testing.T, w1, w2 capacity, run time.Duration) string {
	t.Helper()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "mk-"}}
	if err := manager.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	rt := func() client.Object {
		return fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(2),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(run)})
	}
	flavors, cq, lq := fixtures.Queue(ns, ns, fixtures.Pool{Name: "gpu", GPUs: 64})
	draQuota(cq, 64)
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: localcluster.MultiKueueCheck}}}
	createAll(t, manager, append(asObjects(flavors), cq, lq, rt())...)
	for _, w := range []struct {
		c *cluster
		capacity
	}{{worker1, w1}, {worker2, w2}} {
		createAll(t, w.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		p := pool(ns, w.quotaGPUs)
		for i := range w.nodes {
			if err := localcluster.AddNode(ctx, w.c, fixtures.Node(fmt.Sprintf("%s-%s-%d", ns, w.c.name, i), p, 8)); err != nil {
				t.Fatal(err)
			}
		}
		flavors, cq, lq := fixtures.Queue(ns, ns, p)
		draQuota(cq, w.quotaGPUs)
		createAll(t, w.c, append(asObjects(flavors), cq, lq, rt())...)
	}
	for _, c := range []*cluster{manager, worker1, worker2} {
		fixtures.WaitActive(t, ctx, c, ns, 30*time.Second)
	}
	return ns
}

// draQuota gives a ClusterQueue of a DRA set-up (draOn) as many GPUs
// claimed through DRA as it has GPUs requested as nvidia.com/gpu.
func draQuota(cq *kueue.ClusterQueue, gpus int64) {
	if draOn() {
		fixtures.SetDRAQuota(cq, gpus)
	}
}

// draOn: the suite's clusters run DRA (suite_test.go), from Kueue v0.18.
func draOn() bool { return kueueVersion == "" || kueueVersion >= "v0.18" }

func asObjects[T client.Object](in []T) []client.Object {
	out := make([]client.Object, len(in))
	for i := range in {
		out[i] = in[i]
	}
	return out
}

func createAll(t *testing.T, c *cluster, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		eventually(t, 30*time.Second, "create "+o.GetName()+" on "+c.name, func() error {
			err := c.Create(ctx, o)
			// Webhooks read from informer caches that may lag a moment.
			if err != nil && fixtures.RuntimeNotCachedYet(err) {
				return err
			}
			if err != nil {
				t.Fatalf("creating %T %s on %s: %v", o, o.GetName(), c.name, err)
			}
			return nil
		})
	}
}

// occupy runs a job of the worker's own that takes its quota.
func occupy(t *testing.T, w *cluster, ns string) {
	t.Helper()
	blocker := trainJob(ns, "local-blocker")
	createAll(t, w, blocker)
	eventually(t, dispatch, "blocker admitted on "+w.name, func() error {
		if ptr.Deref(get(t, w, blocker).Spec.Suspend, true) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
}

func trainJob(ns, name string) *trainer.TrainJob {
	return fixtures.TrainJob(ns, name, "torch", "lq")
}

func get(t *testing.T, c *cluster, tj *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	got := &trainer.TrainJob{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
		t.Fatalf("reading TrainJob %s on %s: %v", tj.Name, c.name, err)
	}
	return got
}

// managerWorkload is the name of the job's Workload on the manager, which
// MultiKueue gives the worker's copy too.
func managerWorkload(t *testing.T, tj *trainer.TrainJob) string {
	t.Helper()
	key, _ := jobworkload.Key(get(t, manager, tj))
	return key.Name
}

// runsOn waits until the job's pods run on w's nodes, and checks the
// worker runs the manager's Workload, not one of its own.
func runsOn(t *testing.T, w *cluster, tj *trainer.TrainJob) {
	t.Helper()
	wlName := managerWorkload(t, tj)
	eventually(t, dispatch, tj.Name+" running on "+w.name, func() error {
		var pods corev1.PodList
		if err := w.List(ctx, &pods, client.InNamespace(tj.Namespace), client.MatchingLabels{jobsetapi.JobSetNameKey: tj.Name}); err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, tj.Namespace+"-"+w.name) {
				running++
			}
		}
		if running != 2 {
			return fmt.Errorf("%d of 2 pods running on %s's nodes; %s", running, w.name, dispatchState(tj))
		}
		return nil
	})
	remote := get(t, w, tj)
	// Kueue v0.19 names it in an annotation, older releases in a label.
	if got := jobframework.PrebuiltWorkloadNameFor(remote); got != wlName {
		t.Errorf("worker copy on %s runs Workload %q, want the manager's %q", w.name, got, wlName)
	}
	var wls kueue.WorkloadList
	if err := w.List(ctx, &wls, client.InNamespace(tj.Namespace)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, wl := range wls.Items {
		if owner := metav1.GetControllerOf(&wl); owner != nil && owner.UID == remote.UID {
			names = append(names, wl.Name)
		}
	}
	if !slices.Equal(names, []string{wlName}) {
		t.Errorf("Workloads of the job on %s: %v, want exactly the manager's %s", w.name, names, wlName)
	}
}

// dispatchState says where a dispatch stands on every cluster, for a
// failure message: the manager's Workload, and on each worker the job's
// copy, its Workload and its pods.
func dispatchState(tj *trainer.TrainJob) string {
	var b strings.Builder
	conditions := func(cs []metav1.Condition) string {
		var parts []string
		for _, c := range cs {
			parts = append(parts, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	workloadOf := func(c *cluster) string {
		var wls kueue.WorkloadList
		if err := c.List(ctx, &wls, client.InNamespace(tj.Namespace)); err != nil {
			return err.Error()
		}
		var parts []string
		for _, wl := range wls.Items {
			checks := ""
			for _, ac := range wl.Status.AdmissionChecks {
				checks += fmt.Sprintf(" check %s=%s(%s)", ac.Name, ac.State, ac.Message)
			}
			parts = append(parts, fmt.Sprintf("Workload %s clusterName=%q nominated=%v %s%s", wl.Name, ptr.Deref(wl.Status.ClusterName, ""), wl.Status.NominatedClusterNames, conditions(wl.Status.Conditions), checks))
		}
		return strings.Join(parts, "; ")
	}
	fmt.Fprintf(&b, "manager: %s", workloadOf(manager))
	for _, w := range []*cluster{worker1, worker2} {
		fmt.Fprintf(&b, "\n%s: ", w.name)
		got := &trainer.TrainJob{}
		if err := w.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			fmt.Fprintf(&b, "TrainJob: %v", err)
			continue
		}
		fmt.Fprintf(&b, "TrainJob suspend=%v %s; %s", ptr.Deref(got.Spec.Suspend, false), conditions(got.Status.Conditions), workloadOf(w))
		var pods corev1.PodList
		if err := w.List(ctx, &pods, client.InNamespace(tj.Namespace)); err != nil {
			fmt.Fprintf(&b, "; pods: %v", err)
			continue
		}
		for _, p := range pods.Items {
			fmt.Fprintf(&b, "; pod %s %s node=%q gates=%d", p.Name, p.Status.Phase, p.Spec.NodeName, len(p.Spec.SchedulingGates))
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
					fmt.Fprintf(&b, " unschedulable(%s)", c.Message)
				}
			}
		}
	}
	return b.String()
}

// noneLeftOn: no TrainJob, JobSet, Workload or pod of the namespace is left
// on the worker.
func noneLeftOn(t *testing.T, w *cluster, ns string) {
	t.Helper()
	eventually(t, time.Minute, "nothing left on "+w.name, func() error {
		for _, list := range []client.ObjectList{&trainer.TrainJobList{}, &jobsetapi.JobSetList{}, &kueue.WorkloadList{}, &corev1.PodList{}} {
			if err := w.List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
			if n := apimeta.LenList(list); n > 0 {
				return fmt.Errorf("%d %T left", n, list)
			}
		}
		return nil
	})
}

// managerRanNothing: the manager has no JobSet or pod for the namespace,
// trainjob-kueue never wrote its TrainJobs, and the job framework recorded
// no start or stop there.
func managerRanNothing(t *testing.T, ns string) {
	t.Helper()
	for _, list := range []client.ObjectList{&jobsetapi.JobSetList{}, &corev1.PodList{}} {
		if err := manager.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if n := apimeta.LenList(list); n > 0 {
			t.Errorf("the manager has %d %T", n, list)
		}
	}
	writes, err := localcluster.AuditEvents(manager.lc.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.User.Username == ourUser && e.ObjectRef.Resource == "trainjobs" && e.ObjectRef.Namespace == ns &&
			slices.Contains([]string{"create", "update", "patch", "delete"}, e.Verb)
	})
	if err != nil {
		t.Fatal(err)
	}
	told := map[string]int{}
	for _, e := range writes {
		// Our condition, while a job waits on the manager before
		// MultiKueue dispatches it (then MultiKueue copies the worker's
		// status): a few writes at most, never a fight with that copy.
		if e.ObjectRef.Subresource == "status" && e.Verb == "patch" {
			if told[e.ObjectRef.Name]++; told[e.ObjectRef.Name] > 3 {
				t.Errorf("trainjob-kueue wrote TrainJob %s's status on the manager %d times: a fight with MultiKueue's copy", e.ObjectRef.Name, told[e.ObjectRef.Name])
			}
			continue
		}
		t.Errorf("trainjob-kueue wrote a TrainJob on the manager: %s %s", e.Verb, e.RequestURI)
	}
	var events corev1.EventList
	if err := manager.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "TrainJob" && slices.Contains([]string{"Started", "Stopped", integration.ReasonInjected, integration.ReasonRestored}, e.Reason) {
			t.Errorf("event %s %q on TrainJob %s on the manager", e.Reason, e.Message, e.InvolvedObject.Name)
		}
	}
}

func TestDispatchedTrainJobRunsOnTheWorkerWithQuotaAndCompletes(t *testing.T) {
	// The pods run long enough to be seen running together. At 5 s a
	// busy machine can start the second pod as the first one ends: a CI
	// run saw the job complete on the worker without ever seeing both
	// pods running.
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 30*time.Second)
	tj := trainJob(ns, "dispatched")
	createAll(t, manager, tj)
	if got := get(t, manager, tj); ptr.Deref(got.Spec.ManagedBy, "") != kueue.MultiKueueControllerName || !ptr.Deref(got.Spec.Suspend, false) {
		t.Fatalf("on the manager: managedBy %q suspend %v, want %q and suspended", ptr.Deref(got.Spec.ManagedBy, ""), ptr.Deref(got.Spec.Suspend, false), kueue.MultiKueueControllerName)
	}
	runsOn(t, worker1, tj)
	fixtures.WaitComplete(t, ctx, manager, tj, dispatch)
	// Complete shows the worker's status, copied back; the manager's own
	// copy was never started.
	if got := get(t, manager, tj); !ptr.Deref(got.Spec.Suspend, false) {
		t.Error("the manager's TrainJob was unsuspended")
	}
	eventually(t, time.Minute, "Workload finished on the manager", func() error {
		wl := &kueue.Workload{}
		if err := manager.Get(ctx, client.ObjectKey{Namespace: ns, Name: managerWorkload(t, tj)}, wl); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	noneLeftOn(t, worker1, ns)
	noneLeftOn(t, worker2, ns)
	managerRanNothing(t, ns)
}

func TestDispatchedTrainJobWaitsForRoomThenGoesToTheOtherWorker(t *testing.T) {
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Minute)
	// worker1's quota goes to a job of its own.
	occupy(t, worker1, ns)

	tj := trainJob(ns, "waits")
	createAll(t, manager, tj)
	consistently(t, 10*time.Second, "no worker has room", func() error {
		for _, w := range []*cluster{worker1, worker2} {
			err := w.Get(ctx, client.ObjectKeyFromObject(tj), &trainer.TrainJob{})
			if err == nil {
				return fmt.Errorf("%s got a copy of the job", w.name)
			}
			if client.IgnoreNotFound(err) != nil {
				return err
			}
		}
		return nil
	})

	// worker2 gets quota: the job goes there.
	setQuota(t, worker2, ns, 8)
	runsOn(t, worker2, tj)
	if err := worker1.Get(ctx, client.ObjectKeyFromObject(tj), &trainer.TrainJob{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("%s has a copy of the job it did not admit (err %v)", worker1.name, err)
	}
	if err := manager.Delete(ctx, tj); err != nil {
		t.Fatal(err)
	}
	noneLeftOn(t, worker2, ns)
	managerRanNothing(t, ns)
}

// setActive deactivates or reactivates the job's Workload on the manager,
// as an admin does to evict a job.
func setActive(t *testing.T, tj *trainer.TrainJob, active bool) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("Workload active=%v", active), func() error {
		wl := &kueue.Workload{}
		if err := manager.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: managerWorkload(t, tj)}, wl); err != nil {
			return err
		}
		wl.Spec.Active = ptr.To(active)
		return manager.Update(ctx, wl)
	})
}

func TestEvictingOrDeletingOnTheManagerCleansTheWorker(t *testing.T) {
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Minute)
	tj := trainJob(ns, "evicted-then-deleted")
	createAll(t, manager, tj)
	runsOn(t, worker1, tj)
	// The worker's status flows back while the job runs.
	eventually(t, time.Minute, "jobsStatus copied to the manager", func() error {
		for _, s := range get(t, manager, tj).Status.JobsStatus {
			if s.Name == "node" && ptr.Deref(s.Active, 0) == 1 {
				return nil
			}
		}
		return fmt.Errorf("jobsStatus %+v", get(t, manager, tj).Status.JobsStatus)
	})

	// Evicted on the manager: the worker's copy goes, the manager's job
	// waits, suspended as ever; back in the queue, it runs again.
	setActive(t, tj, false)
	noneLeftOn(t, worker1, ns)
	setActive(t, tj, true)
	runsOn(t, worker1, tj)

	if err := manager.Delete(ctx, tj); err != nil {
		t.Fatal(err)
	}
	noneLeftOn(t, worker1, ns)
	eventually(t, time.Minute, "Workload gone on the manager", func() error {
		var wls kueue.WorkloadList
		if err := manager.List(ctx, &wls, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(wls.Items) > 0 {
			return fmt.Errorf("%d left", len(wls.Items))
		}
		return nil
	})
	managerRanNothing(t, ns)
}

// Last: it takes worker1 down for good. Kueue keeps the job admitted for
// workerLostTimeout (30s on the local manager), then requeues it; it goes
// to the worker left and completes there.
func TestJobOfALostWorkerMovesToTheOtherAndCompletes(t *testing.T) {
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 8, nodes: 1}, 20*time.Second)
	// worker2 is busy at first, so the job lands on worker1.
	occupy(t, worker2, ns)
	tj := trainJob(ns, "survivor")
	createAll(t, manager, tj)
	runsOn(t, worker1, tj)
	// worker1 stays without its API server for the rest of the suite: no
	// test that uses worker1 may run after this one (none is parallel).
	if err := worker1.lc.Kill("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	// The blocker finishes in 20s, the lost worker's job is requeued after
	// 30s: it then runs on worker2, usually within a minute of the kill.
	runsOn(t, worker2, tj)
	fixtures.WaitComplete(t, ctx, manager, tj, dispatch)
	managerRanNothing(t, ns)
}
