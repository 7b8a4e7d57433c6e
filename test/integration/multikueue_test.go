package integration_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
	"sigs.k8s.io/kueue/pkg/workload/evict"
	"sigs.k8s.io/kueue/pkg/workload/patching"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// multiKueueQueue is a queue whose ClusterQueue has a MultiKueue admission
// check. No MultiKueue controller runs in this tier: the check is marked
// active by hand, as Kueue's would once its worker clusters connect.
func multiKueueQueue(t *testing.T, ns string, pools ...pool) (lq, check string) {
	t.Helper()
	check = ns + "-mk"
	ac := &kueue.AdmissionCheck{
		ObjectMeta: metav1.ObjectMeta{Name: check},
		Spec: kueue.AdmissionCheckSpec{
			ControllerName: kueue.MultiKueueControllerName,
			Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.SchemeGroupVersion.Group, Kind: "MultiKueueConfig", Name: check},
		},
	}
	create(t, ac)
	eventually(t, "AdmissionCheck active", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(ac), ac); err != nil {
			return err
		}
		apimeta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: kueue.AdmissionCheckActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "played by the test"})
		return k8s.Status().Update(ctx, ac)
	})
	flavors, cq, q := fixtures.Queue(ns, ns, pools...)
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(check)}}}
	for _, rf := range flavors {
		create(t, rf)
	}
	create(t, cq, q)
	eventually(t, "ClusterQueue active", func() error {
		var got kueue.ClusterQueue
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cq), &got); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(got.Status.Conditions, kueue.ClusterQueueActive) {
			return fmt.Errorf("not active: %v", got.Status.Conditions)
		}
		return nil
	})
	return q.Name, check
}

// setCheck plays MultiKueue on the manager: the check turns Ready once a
// worker admitted the job.
func setCheck(t *testing.T, tj *trainer.TrainJob, check string, state kueue.CheckState) {
	t.Helper()
	eventually(t, "check "+check+" "+string(state), func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if !workload.HasQuotaReservation(wl) {
			return fmt.Errorf("no quota reserved yet")
		}
		patching.SetAdmissionCheckState(&wl.Status.AdmissionChecks, kueue.AdmissionCheckState{
			Name: kueue.AdmissionCheckReference(check), State: state, Message: "played by the test",
		}, clock.RealClock{})
		return k8s.Status().Update(ctx, wl)
	})
}

func TestJobOnADispatchingQueueGoesToMultiKueueAndIsNeverStartedHere(t *testing.T) {
	ns := newNamespace(t)
	lq, check := multiKueueQueue(t, ns, pool{Name: "gpu", GPUs: 8})
	create(t, trainingRuntime(ns, "torch", torchPolicy(2), role{Name: "node", Ancestor: "trainer", Requests: gpus(4)}))
	tj := trainJob(ns, "dispatched", "torch", lq)
	// Trainer's default, as its CRD sets it: ours to replace.
	tj.Spec.ManagedBy = ptr.To(trainjob.TrainerControllerName)
	create(t, tj)

	got := getTrainJob(t, tj)
	if diff := cmp.Diff(kueue.MultiKueueControllerName, ptr.Deref(got.Spec.ManagedBy, "")); diff != "" {
		t.Fatalf("spec.managedBy (-want +got):\n%s", diff)
	}
	if !ptr.Deref(got.Spec.Suspend, false) {
		t.Fatal("a queued job must be created suspended")
	}
	before := got.Spec.DeepCopy()

	setCheck(t, tj, check, kueue.CheckStateReady)
	eventually(t, "Workload admitted", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); !workload.IsAdmitted(wl) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		return nil
	})
	// A worker runs it now: here it stays exactly as it was, and admitted.
	consistently(t, "dispatched job untouched", 5*time.Second, func() error {
		now := getTrainJob(t, tj)
		if diff := cmp.Diff(before, &now.Spec); diff != "" {
			return fmt.Errorf("spec changed on the manager (-before +now):\n%s", diff)
		}
		if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); !workload.IsAdmitted(wl) || evict.IsEvicted(wl) {
			return fmt.Errorf("workload lost its admission: %v", wl.Status.Conditions)
		}
		return nil
	})
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == tj.Name && (e.Reason == "Started" || e.Reason == integration.ReasonInjected || e.Reason == "Stopped") {
			t.Errorf("event %s %q on a dispatched job", e.Reason, e.Message)
		}
	}

	// The worker lost: MultiKueue sends the check to Retry, Kueue evicts and
	// requeues. Nothing is written to the job on the way.
	setCheck(t, tj, check, kueue.CheckStateRetry)
	eventually(t, "Workload requeued", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if workload.IsAdmitted(wl) {
			return fmt.Errorf("still admitted")
		}
		return nil
	})
	if diff := cmp.Diff(before, &getTrainJob(t, tj).Spec); diff != "" {
		t.Fatalf("spec changed on the manager (-before +now):\n%s", diff)
	}
}

func TestInvalidMultiKueueCombinationsAreRefusedWithTheFix(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	create(t, trainingRuntime(ns, "torch", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	for _, tc := range []struct {
		name, queue, want string
	}{
		{"queue-without-check", lq, "has no MultiKueue admission check"},
		{"no-queue", "", "must be queued"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tj := trainJob(ns, tc.name, "torch", tc.queue)
			tj.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
			err := k8s.Create(ctx, tj)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "spec.managedBy") {
				t.Fatalf("creating the job: got %v, want a refusal naming spec.managedBy and %q", err, tc.want)
			}
		})
	}
}

// A job for MultiKueue created before its queue, which turns out not to
// dispatch: it is admitted here, and must not start here nor hold quota.
func TestJobForMultiKueueAdmittedWithoutACheckIsRefusedOnce(t *testing.T) {
	ns := newNamespace(t)
	create(t, trainingRuntime(ns, "torch", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "early", "torch", "lq")
	tj.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
	create(t, tj)
	queue(t, ns, pool{Name: "gpu", GPUs: 8})

	eventually(t, "NoMultiKueueCheck event", func() error {
		return hasEvent(t, tj, integration.ReasonNoMultiKueueCheck, "without a MultiKueue admission check")
	})
	eventually(t, "Workload finished", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("not finished: %v", wl.Status.Conditions)
		}
		return nil
	})
	if ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) != true {
		t.Fatal("the job was started")
	}
	if eventCount(tj, integration.ReasonNoMultiKueueCheck) == 0 {
		t.Fatalf("the API has a %s event the count does not: this test could not see a loop", integration.ReasonNoMultiKueueCheck)
	}
	// Refused once, not in a loop. 2 s: a reconcile retried with the
	// controller's backoff (5 ms, doubling) would have run about nine
	// times by then.
	consistently(t, "refused once", 2*time.Second, func() error {
		if n := eventCount(tj, integration.ReasonNoMultiKueueCheck); n > 1 {
			return fmt.Errorf("event %s recorded %d times", integration.ReasonNoMultiKueueCheck, n)
		}
		return nil
	})
}
