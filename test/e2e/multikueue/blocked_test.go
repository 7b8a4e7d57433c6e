package multikueue_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/multikueue"
)

// blockedSay bounds how long the manager may take to say why a dispatched
// job does not run, once a worker admitted it: the worker holds its copy
// at once, the manager looks within its first 10 s.
const blockedSay = 2 * time.Minute

// A TrainJob "clash" of its owner's already on worker 1, which alone has
// quota: the manager's "clash" is dispatched there and cannot run. Within
// a bounded time the manager's job says why (naming worker 1 and the
// clash) and worker 1's quota is free; once worker 2 gets quota the job
// runs there and completes; worker 1's own job is never written.
func TestADispatchedJobBlockedByASameNamedJobOnAWorkerRunsOnTheOther(t *testing.T) {
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Second)
	theirs := ownJob(ns, "clash")
	createAll(t, worker1, theirs)
	before := snapshot(t, worker1, theirs)

	tj := trainJob(ns, "clash")
	createAll(t, manager, tj)
	saidOnManager(t, tj, worker1.name, "already exists")
	quotaFree(t, worker1, ns)

	setQuota(t, worker2, ns, 8)
	runsOn(t, worker2, tj)
	fixtures.WaitComplete(t, ctx, manager, tj, dispatch)
	if err := manager.Delete(ctx, tj); err != nil {
		t.Fatal(err)
	}
	gone(t, manager, tj)
	quotaFree(t, worker1, ns)
	if after := snapshot(t, worker1, theirs); after != before {
		t.Errorf("worker 1's own job changed:\nbefore %s\nafter  %s", before, after)
	}
}

// Only worker 1, where the name is taken, has quota: the job waits, said,
// holding no worker's quota, and runs there once the job in the way is
// deleted.
func TestADispatchedJobWaitsWithoutQuotaUntilTheSameNamedJobIsGone(t *testing.T) {
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Second)
	theirs := ownJob(ns, "clash")
	createAll(t, worker1, theirs)
	tj := trainJob(ns, "clash")
	createAll(t, manager, tj)
	saidOnManager(t, tj, worker1.name, "already exists")
	quotaFree(t, worker1, ns)
	consistently(t, 15*time.Second, "no worker's quota held", func() error {
		for _, w := range []*cluster{worker1, worker2} {
			if n := admittedOn(t, w, ns); n > 0 {
				return fmt.Errorf("%d Workloads admitted on %s", n, w.name)
			}
		}
		return nil
	})
	if err := worker1.Delete(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	runsOn(t, worker1, tj)
	fixtures.WaitComplete(t, ctx, manager, tj, dispatch)
}

// The runtime the job names is missing on worker 1, which alone has quota:
// the worker refuses the copy; the manager says so, worker 1's quota goes
// back, and the job runs there once the runtime is created.
func TestADispatchedJobWhoseRuntimeIsMissingOnTheWorkerRunsOnceItIsThere(t *testing.T) {
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 10*time.Second)
	rt := &trainer.TrainingRuntime{}
	if err := worker1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "torch"}, rt); err != nil {
		t.Fatal(err)
	}
	if err := worker1.Delete(ctx, rt); err != nil {
		t.Fatal(err)
	}
	tj := trainJob(ns, "norun")
	createAll(t, manager, tj)
	saidOnManager(t, tj, worker1.name, "refuses")
	quotaFree(t, worker1, ns)
	rt.ResourceVersion, rt.UID = "", ""
	createAll(t, worker1, rt)
	runsOn(t, worker1, tj)
	fixtures.WaitComplete(t, ctx, manager, tj, dispatch)
}

// ownJob is a TrainJob a worker's user made there, without a queue:
// suspended, and never MultiKueue's.
func ownJob(ns, name string) *trainer.TrainJob {
	tj := trainJob(ns, name)
	tj.Labels = nil
	tj.Spec.Suspend = ptr.To(true)
	return tj
}

// snapshot is what a job's owner wrote: its identity, labels, annotations,
// generation and spec.
func snapshot(t *testing.T, c *cluster, tj *trainer.TrainJob) string {
	t.Helper()
	got := get(t, c, tj)
	b, err := json.Marshal(map[string]any{"uid": got.UID, "generation": got.Generation, "labels": got.Labels, "annotations": got.Annotations, "spec": got.Spec})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// saidOnManager waits for the event on the manager's TrainJob that names
// worker and says what.
func saidOnManager(t *testing.T, tj *trainer.TrainJob, worker, what string) {
	t.Helper()
	eventually(t, blockedSay, "the manager says why "+tj.Name+" does not run", func() error {
		var events corev1.EventList
		if err := manager.List(ctx, &events, client.InNamespace(tj.Namespace)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "TrainJob" && e.InvolvedObject.Name == tj.Name && e.Reason == multikueue.ReasonDispatchHeld &&
				e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, worker) && strings.Contains(e.Message, what) {
				return nil
			}
		}
		return fmt.Errorf("no %s event naming %s and saying %q; %s", multikueue.ReasonDispatchHeld, worker, what, dispatchState(tj))
	})
}

// admittedOn counts the Workloads of ns holding quota on w.
func admittedOn(t *testing.T, w *cluster, ns string) int {
	t.Helper()
	var wls kueue.WorkloadList
	if err := w.List(ctx, &wls, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range wls.Items {
		if workload.HasQuotaReservation(&wls.Items[i]) {
			n++
		}
	}
	return n
}

// quotaFree waits until no Workload holds quota of w's ClusterQueue ns.
func quotaFree(t *testing.T, w *cluster, ns string) {
	t.Helper()
	eventually(t, blockedSay, "no quota held on "+w.name, func() error {
		cq := &kueue.ClusterQueue{}
		if err := w.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return err
		}
		if cq.Status.ReservingWorkloads > 0 || admittedOn(t, w, ns) > 0 {
			return fmt.Errorf("%d Workloads reserve quota on %s", cq.Status.ReservingWorkloads, w.name)
		}
		return nil
	})
}

func setQuota(t *testing.T, w *cluster, ns string, gpus int64) {
	t.Helper()
	eventually(t, 30*time.Second, "quota on "+w.name, func() error {
		cq := &kueue.ClusterQueue{}
		if err := w.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return err
		}
		for i, r := range cq.Spec.ResourceGroups[0].Flavors[0].Resources {
			if r.Name == fixtures.GPU {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[i].NominalQuota = *resource.NewQuantity(gpus, resource.DecimalSI)
			}
		}
		draQuota(cq, gpus)
		return w.Update(ctx, cq)
	})
}

func gone(t *testing.T, c *cluster, tj *trainer.TrainJob) {
	t.Helper()
	eventually(t, time.Minute, tj.Name+" gone from "+c.name, func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(tj), &trainer.TrainJob{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}
