package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// A ClusterQueue opted in to coscheduling while scheduler-plugins was
// there; then an admin removes scheduler-plugins' PodGroup CRD (an
// upgrade gone wrong, a cleanup). A job Kueue admits under it now is an
// admin's set-up, not the job's fault: it waits, suspended, keeping its
// reservation, with a Warning naming what to install, and its Workload is
// never finished; once the CRD is back (trainjob-kueue restarts to serve
// the mode) it runs whole.
func TestAJobAdmittedUnderAGangModeThatWentAwayWaitsAndRunsOnceItIsBack(t *testing.T) {
	onSchedulerPlugins(t)
	ns := namespace(t)
	p := gpuPool(ns, "away", 16)
	nodesOf(t, ns, p, 2, 8)
	lq := gangQueue(t, ns, p)
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(2),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(5 * time.Second)}))

	restore := removePodGroupCRD(t)
	tj := fixtures.TrainJob(ns, "orphan", "torch", lq.Name)
	create(t, tj)
	eventually(t, 2*time.Minute, "a GangUnsupported warning naming what to install", func() error {
		return fixtures.EventOn(ctx, k8s, tj, gang.ReasonGangUnsupported, discovery.PodGroupCRD)
	})
	// Ten seconds of retries with back-off: never finished, never started.
	for range 10 {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			t.Fatalf("the Workload of a job whose gang mode went away was finished: %v", apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished))
		}
		if !workload.IsAdmitted(wl) {
			t.Errorf("the waiting job gave its reservation back (%v): it was kept so the job starts first once the mode is served", wl.Status.Conditions)
		}
		if !suspended(getJob(t, tj)) || len(podsOf(t, tj, "node")) > 0 {
			t.Fatal("the job started although its gang can't be carried out")
		}
		time.Sleep(time.Second)
	}

	restore()
	if overrideField() == "spec.podSpecOverrides" {
		// Trainer v2.0 can't carry the PodGroup label at all: the job
		// stays as it is (TestOverSubscribedGangsStartWholeOneAtATime).
		return
	}
	waitComplete(t, tj, 4*time.Minute)
}

// removePodGroupCRD deletes scheduler-plugins' PodGroup CRD, waits until it
// is gone, and returns what puts it back as it was (also done when t ends,
// for the suite's next coscheduling test).
func removePodGroupCRD(t *testing.T) (restore func()) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: discovery.PodGroupCRD}, crd); err != nil {
		t.Fatal(err)
	}
	again := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
		Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations}, Spec: crd.Spec}
	if err := k8s.Delete(ctx, crd); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the PodGroup CRD gone", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Name: crd.Name}, &apiextensionsv1.CustomResourceDefinition{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		eventually(t, time.Minute, "the PodGroup CRD back", func() error {
			c := again.DeepCopy()
			if err := k8s.Create(ctx, c); client.IgnoreAlreadyExists(err) != nil {
				return err
			}
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := k8s.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("not established yet")
		})
	}
	t.Cleanup(restore)
	return restore
}
