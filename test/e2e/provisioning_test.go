package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// checkCapacity is the provisioning class the tests ask for (cluster-
// autoscaler's class that books capacity the cluster has).
const checkCapacity = "check-capacity.autoscaling.x-k8s.io"

// provisioningQueue is a queue of its own whose ClusterQueue has Kueue's
// provisioning admission check for the GPUs, with the fake provisioner's
// parameters (hack/fakeprovisioner) and the retries given; it returns the
// LocalQueue and the check's name.
func provisioningQueue(t *testing.T, ns string, pool fixtures.Pool, params map[string]kueue.Parameter, retries int32) (lq, check string) {
	t.Helper()
	prc := &kueue.ProvisioningRequestConfig{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: kueue.ProvisioningRequestConfigSpec{
			ProvisioningClassName: checkCapacity,
			Parameters:            params,
			ManagedResources:      []corev1.ResourceName{fixtures.GPU},
			RetryStrategy:         &kueue.ProvisioningRequestRetryStrategy{BackoffLimitCount: ptr.To(retries), BackoffBaseSeconds: ptr.To[int32](1), BackoffMaxSeconds: ptr.To[int32](2)},
		},
	}
	ac := &kueue.AdmissionCheck{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: kueue.AdmissionCheckSpec{
			ControllerName: kueue.ProvisioningRequestControllerName,
			Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.SchemeGroupVersion.Group, Kind: "ProvisioningRequestConfig", Name: prc.Name},
		},
	}
	flavors, cq, q := fixtures.Queue(ns, ns, pool)
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(ac.Name)}}}
	for _, rf := range flavors {
		create(t, rf)
	}
	create(t, prc, ac, cq, q)
	eventually(t, time.Minute, "AdmissionCheck "+ac.Name+" active (Kueue's provisioning controller runs: the cluster has PROVISIONING=true)", func() error {
		got := &kueue.AdmissionCheck{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: ac.Name}, got); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(got.Status.Conditions, kueue.AdmissionCheckActive) {
			return fmt.Errorf("not active: %v", got.Status.Conditions)
		}
		return nil
	})
	return q.Name, ac.Name
}

func initAndTrainer(ns string) *trainer.TrainingRuntime {
	tol := []corev1.Toleration{runtimeToleration}
	run := fixtures.RunFor(3 * time.Second)
	return fixtures.TrainingRuntime(ns, "torch-init", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run},
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run, DependsOn: []string{"dataset-initializer"}})
}

// A queue with Kueue's provisioning admission check, as clouds obtain GPU
// nodes (cluster-autoscaler's ProvisioningRequests; here a fake
// provisioner): the request asks for the trainer's GPU pods only; while it
// is pending the job holds its quota reservation but stays suspended, with
// no pod; once provisioned it starts, its trainer pods carrying the
// request to consume and its class, its initializer's not; it completes.
func TestAProvisioningRequestStartsTheJobOnceProvisioned(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "a100", 8)
	nodesOf(t, ns, pool, 1, 8)
	lq, check := provisioningQueue(t, ns, pool, map[string]kueue.Parameter{"delay": "8s"}, 0)
	create(t, initAndTrainer(ns))
	tj := fixtures.TrainJob(ns, "provisioned", "torch-init", lq)
	tj.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2), ResourcesPerNode: ptr.To(fixtures.WithLimits(fixtures.GPUs(4)))}
	create(t, tj)

	var request *autoscaling.ProvisioningRequest
	eventually(t, time.Minute, "a pending ProvisioningRequest for the job's GPU pods", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			return fmt.Errorf("no quota reserved yet")
		}
		var prs autoscaling.ProvisioningRequestList
		if err := k8s.List(ctx, &prs, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(prs.Items) != 1 {
			return fmt.Errorf("%d ProvisioningRequests", len(prs.Items))
		}
		request = &prs.Items[0]
		return nil
	})
	if got := len(request.Spec.PodSets); got != 1 || request.Spec.PodSets[0].Count != 2 {
		t.Errorf("the request asks for %d pod sets %+v, want one of 2 pods (the trainer's GPU nodes, not the CPU initializer)", got, request.Spec.PodSets)
	}
	if apimeta.IsStatusConditionTrue(request.Status.Conditions, autoscaling.Provisioned) {
		t.Fatal("the request was provisioned before the job could be seen waiting: raise the fake provisioner's delay")
	}
	if got := getJob(t, tj); !suspended(got) {
		t.Fatal("the job started while its ProvisioningRequest was pending")
	}
	if pods := allPodsOf(t, tj); len(pods) > 0 {
		t.Fatalf("%d pods while the ProvisioningRequest was pending", len(pods))
	}
	if state := checkState(t, tj, check); state != kueue.CheckStatePending {
		t.Errorf("admission check %s is %s while the request is pending, want Pending", check, state)
	}

	eventually(t, 2*time.Minute, "the job started once the request was provisioned", func() error {
		if got := getJob(t, tj); suspended(got) {
			return fmt.Errorf("suspended; admission check %s is %s", check, checkState(t, tj, check))
		}
		if len(podsOf(t, tj, "node")) != 2 {
			return fmt.Errorf("the trainer has %d pods", len(podsOf(t, tj, "node")))
		}
		return nil
	})
	for _, p := range podsOf(t, tj, "node") {
		if got := p.Annotations[autoscaling.ProvisioningRequestPodAnnotationKey]; got != request.Name {
			t.Errorf("trainer pod %s consumes ProvisioningRequest %q, want %q", p.Name, got, request.Name)
		}
		if got := p.Annotations[autoscaling.ProvisioningClassPodAnnotationKey]; got != checkCapacity {
			t.Errorf("trainer pod %s has provisioning class %q, want %q", p.Name, got, checkCapacity)
		}
	}
	for _, p := range podsOf(t, tj, "dataset-initializer") {
		if got, ok := p.Annotations[autoscaling.ProvisioningRequestPodAnnotationKey]; ok {
			t.Errorf("initializer pod %s consumes ProvisioningRequest %q, which did not ask for it", p.Name, got)
		}
	}
	waitComplete(t, tj, 3*time.Minute)
}

// A ProvisioningRequest that fails (no retry left) starts nothing: Kueue
// rejects the check and deactivates the Workload (its reservation
// released); the job stays suspended, with no pod, at every poll.
func TestAFailedProvisioningRequestStartsNothing(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "a100", 8)
	nodesOf(t, ns, pool, 1, 8)
	lq, check := provisioningQueue(t, ns, pool, map[string]kueue.Parameter{"delay": "2s", "outcome": "Failed"}, 0)
	create(t, initAndTrainer(ns))
	tj := fixtures.TrainJob(ns, "unprovisioned", "torch-init", lq)
	tj.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2), ResourcesPerNode: ptr.To(fixtures.WithLimits(fixtures.GPUs(4)))}
	create(t, tj)
	eventually(t, 2*time.Minute, "the Workload deactivated for its rejected check", func() error {
		if got := getJob(t, tj); !suspended(got) {
			t.Fatal("the job started although its ProvisioningRequest failed")
		}
		if pods := allPodsOf(t, tj); len(pods) > 0 {
			t.Fatalf("%d pods of a job whose ProvisioningRequest failed", len(pods))
		}
		// Kueue resets the checks of the Workload it deactivates: the
		// rejection is said in its event.
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if ptr.Deref(wl.Spec.Active, true) {
			return fmt.Errorf("the Workload is still active; admission check %s is %s", check, checkState(t, tj, check))
		}
		return fixtures.EventOn(ctx, k8s, wl, "AdmissionCheckRejected", check)
	})
	for range 5 {
		time.Sleep(time.Second)
		if got := getJob(t, tj); !suspended(got) || len(allPodsOf(t, tj)) > 0 {
			t.Fatal("the job started after its ProvisioningRequest failed")
		}
	}
}

// checkState is the state of the job's Workload's admission check.
func checkState(t *testing.T, tj *trainer.TrainJob, check string) kueue.CheckState {
	t.Helper()
	for _, ac := range fixtures.WaitWorkload(t, ctx, k8s, tj).Status.AdmissionChecks {
		if string(ac.Name) == check {
			return ac.State
		}
	}
	return "absent"
}

// allPodsOf lists every pod of a job, whichever role.
func allPodsOf(t *testing.T, tj *trainer.TrainJob) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(tj.Namespace), client.MatchingLabels{jobsetapi.JobSetNameKey: tj.Name}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}
