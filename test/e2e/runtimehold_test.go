package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// An admin force-deletes the runtime of a job that waits in a queue (on
// Trainer v2.3 after Trainer took the job's snapshot), then the job is
// admitted. Trainer's webhook refuses every update of a job whose runtime
// is missing, the start's too: the job is held, not finished — its
// Workload deactivated, its quota back, RuntimeNotFound said once — and
// once the runtime is created again it is queued, admitted and completes.
func TestRuntimeDeletedUnderAQueuedJobHoldsItUntilTheRuntimeIsBack(t *testing.T) {
	ns := namespace(t)
	p := gpuPool(ns, "cpu", 0)
	p.CPUs = "0" // no quota yet: the job waits in the queue
	nodesOf(t, ns, p, 1, 0)
	lq := queue(t, ns, ns, p)
	role := fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(3 * time.Second)}
	rt := fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1), role)
	create(t, rt)
	tj := fixtures.TrainJob(ns, "job", "torch", lq)
	create(t, tj)
	fixtures.WaitWorkload(t, ctx, k8s, tj)
	if takesSnapshots(t) {
		eventually(t, time.Minute, "Trainer's snapshot of the runtime", func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: tj.Name + "-runtime-snapshot"}, &corev1.ConfigMap{})
		})
	}

	// A forced delete: Trainer's finalizer keeps a runtime in use.
	if err := fixtures.ForceDelete(ctx, k8s, rt); err != nil {
		t.Fatal(err)
	}
	setCPUQuota(t, ns, "8")

	eventually(t, 2*time.Minute, "held, its quota given back", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			t.Fatalf("the Workload was finished: %v", wl.Status.Conditions)
		}
		if wl.Spec.Active == nil || *wl.Spec.Active || wl.Annotations[names.HeldForRuntimeAnnotation] == "" || workload.HasQuotaReservation(wl) {
			return fmt.Errorf("active %v, annotations %v, conditions %v", wl.Spec.Active, wl.Annotations, wl.Status.Conditions)
		}
		return fixtures.EventOn(ctx, k8s, tj, integration.ReasonRuntimeNotFound, "TrainingRuntime "+ns+"/torch")
	})
	consistently(t, 5*time.Second, "not started, not finished", func() error {
		if !suspended(getJob(t, tj)) {
			return fmt.Errorf("started without its runtime")
		}
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("finished: %v", wl.Status.Conditions)
		}
		return nil
	})
	if n := countEvents(t, tj, integration.ReasonRuntimeNotFound); n != 1 {
		t.Errorf("RuntimeNotFound said %d times, want once", n)
	}

	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1), role))
	waitComplete(t, tj, 3*time.Minute)
	wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
	for _, c := range wl.Status.Conditions {
		if strings.Contains(c.Message, "admission check") {
			t.Errorf("Workload condition %s says %q: no admission check was involved", c.Type, c.Message)
		}
	}
}

// setCPUQuota sets the cpu quota of ClusterQueue name's first flavor.
func setCPUQuota(t *testing.T, name, cpus string) {
	t.Helper()
	eventually(t, 30*time.Second, "quota set", func() error {
		cq := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, cq); err != nil {
			return err
		}
		for i, r := range cq.Spec.ResourceGroups[0].Flavors[0].Resources {
			if r.Name == corev1.ResourceCPU {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[i].NominalQuota = resource.MustParse(cpus)
			}
		}
		return k8s.Update(ctx, cq)
	})
}

// countEvents counts the events of reason on obj.
func countEvents(t *testing.T, obj client.Object, reason string) int32 {
	t.Helper()
	var list corev1.EventList
	if err := k8s.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	var n int32
	for _, e := range list.Items {
		if e.InvolvedObject.Name == obj.GetName() && e.Reason == reason {
			n += max(e.Count, 1)
		}
	}
	return n
}
