package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// takesSnapshots: the installed Trainer builds jobs from a copy of their
// runtime taken at their first reconcile (v2.3+).
func takesSnapshots(t *testing.T) bool {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "trainjobs.trainer.kubeflow.org"}, crd); err != nil {
		t.Fatal(err)
	}
	s, err := discovery.DetectShape(crd)
	if err != nil {
		t.Fatal(err)
	}
	return s.Rules().RuntimeSnapshot
}

// A runtime edited while a job queues. Trainer v2.3 builds the job from
// the runtime as it was when the job arrived (its snapshot): the quota
// booked is that, and so are the pods. Before v2.3 Trainer builds the job
// from the live runtime, but the job's JobSet, created when the job
// arrived, refuses the new pod template (JobSet templates are immutable
// but for scheduling fields): the job can't start, and is held out of the
// queue until the runtime is restored (docs/behaviour.md).
func TestRuntimeEditedWhileQueuedBooksWhatThePodsGet(t *testing.T) {
	ns := namespace(t)
	p := gpuPool(ns, "cpu", 0)
	p.CPUs = "0"
	nodesOf(t, ns, p, 1, 0)
	lq := queue(t, ns, ns, p)
	tol := []corev1.Toleration{runtimeToleration}
	rt := fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: fixtures.RunFor(time.Hour)})
	create(t, rt)
	tj := fixtures.TrainJob(ns, "job", "torch", lq)
	create(t, tj)
	snapshots := takesSnapshots(t)
	fixtures.WaitWorkload(t, ctx, k8s, tj)
	if snapshots {
		eventually(t, time.Minute, "Trainer's snapshot of the runtime", func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: tj.Name + "-runtime-snapshot"}, &corev1.ConfigMap{})
		})
	}

	eventually(t, 30*time.Second, "runtime edited", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
			return err
		}
		rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
		return k8s.Update(ctx, rt)
	})
	want := resource.MustParse("3")
	if snapshots {
		want = resource.MustParse("1")
	}
	bookedCPU := func(wl *kueue.Workload) resource.Quantity {
		return wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	}
	// The manager sees the edit (every job of a runtime is reconciled when
	// it changes) and books what Trainer will run.
	eventually(t, time.Minute, "Workload books the runtime Trainer will use", func() error {
		if got := bookedCPU(fixtures.WaitWorkload(t, ctx, k8s, tj)); got.Cmp(want) != 0 {
			return fmt.Errorf("Workload books cpu %s, want %s", got.String(), want.String())
		}
		return nil
	})
	consistently(t, 5*time.Second, "Workload keeps what Trainer will use", func() error {
		if got := bookedCPU(fixtures.WaitWorkload(t, ctx, k8s, tj)); got.Cmp(want) != 0 {
			return fmt.Errorf("Workload books cpu %s, want %s", got.String(), want.String())
		}
		return nil
	})
	// explain shows what the pods will get too: on v2.3 the snapshot's
	// requests, not the edited runtime's.
	ex, err := (&explain.Explainer{Client: k8s}).Explain(ctx, fixtures.Ours(getJob(t, tj)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Roles) != 1 {
		t.Fatalf("explain shows roles %+v, want node alone", ex.Roles)
	}
	if got := ex.Roles[0].PerPod[corev1.ResourceCPU]; got.Cmp(want) != 0 {
		t.Errorf("explain shows cpu %s per pod, want %s (snapshot: %v)", got.String(), want.String(), snapshots)
	}
	if fromSnapshot := strings.Contains(ex.RuntimeFrom, "snapshot"); fromSnapshot != snapshots {
		t.Errorf("explain says the roles come from %q; Trainer snapshots runtimes: %v", ex.RuntimeFrom, snapshots)
	}

	eventually(t, 30*time.Second, "quota given", func() error {
		cq := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return err
		}
		cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("8")
		return k8s.Update(ctx, cq)
	})
	if !snapshots {
		// The job can't start as it is: admitted, it is held out of the
		// queue (JobSetOutOfDate) and the reservation goes back, instead of
		// holding quota until it is deleted.
		eventually(t, 2*time.Minute, "held, its reservation given back", func() error {
			wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
			if wl.Spec.Active == nil || *wl.Spec.Active || wl.Annotations[names.HeldForRuntimeAnnotation] == "" || workload.HasQuotaReservation(wl) {
				return fmt.Errorf("active %v, annotations %v, conditions %v", wl.Spec.Active, wl.Annotations, wl.Status.Conditions)
			}
			return fixtures.EventOn(ctx, k8s, tj, integration.ReasonJobSetOutOfDate, `container "node" asks for requests cpu=1 in the JobSet, requests cpu=3 now`)
		})
		consistently(t, 5*time.Second, "nothing started", func() error {
			if pods := podsOf(t, tj, "node"); len(pods) != 0 {
				return fmt.Errorf("%d pods", len(pods))
			}
			return nil
		})
		// The runtime restored: the job is queued again and runs as built.
		eventually(t, 30*time.Second, "runtime restored", func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
				return err
			}
			rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
			return k8s.Update(ctx, rt)
		})
		want = resource.MustParse("1")
	}
	var admitted *kueue.Workload
	eventually(t, 2*time.Minute, "admitted and running", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if !workload.IsAdmitted(wl) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		admitted = wl
		pods := podsOf(t, tj, "node")
		if len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
			return fmt.Errorf("%d pods, want 1 running", len(pods))
		}
		return nil
	})
	pod := podsOf(t, tj, "node")[0]
	got := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	if booked := bookedCPU(admitted); got.Cmp(booked) != 0 || got.Cmp(want) != 0 {
		t.Errorf("pod requests cpu %s, the Workload booked %s; want both %s", got.String(), booked.String(), want.String())
	}
}
