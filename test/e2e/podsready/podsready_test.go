package podsready_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A job whose trainer nodes wait for an initializer that runs well past
// Kueue's PodsReady timeout: the running initializer is all that is due,
// so the job is ready, never evicted, and completes.
func TestInitializerRunningPastThePodsReadyTimeoutIsNotEvicted(t *testing.T) {
	ns, lq := setUp(t, true)
	initFor := 3 * podsReadyTimeout
	create(t, fixtures.TrainingRuntime(ns, "torch-init", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Annotations: fixtures.RunFor(initFor)},
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(5 * time.Second), DependsOn: []string{"dataset-initializer"}}))
	tj := fixtures.TrainJob(ns, "slow-init", "torch-init", lq)
	tj.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
	create(t, tj)

	deadline := time.Now().Add(initFor + 2*time.Minute)
	sawReadyBeforeTrainers := false
	for {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not complete in time", tj.Name)
		}
		wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
		if err == nil {
			if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
				t.Fatalf("evicted while its initializer ran: %s: %s", c.Reason, c.Message)
			}
			if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady) && len(pods(t, tj, "node")) == 0 {
				sawReadyBeforeTrainers = true
			}
		}
		got := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			t.Fatal(err)
		}
		if apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobFailed) {
			t.Fatalf("%s failed: %v", tj.Name, got.Status.Conditions)
		}
		if apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobComplete) {
			break
		}
		time.Sleep(poll.Interval)
	}
	if !sawReadyBeforeTrainers {
		t.Errorf("the Workload was never PodsReady while only the initializer ran")
	}
	waveEndWrittenOnce(t, tj)
}

// waveEndWrittenOnce: the end of tj's initializer wave — its pods
// reclaimable, PodsReady WaitForRecovery until the trainer nodes are ready
// — was one status write of its Workload, not the job framework's two
// (integration/wave_end.go), and the trainer nodes' readiness then moved
// the condition on to Recovered, keeping the reclaimable pods.
func waveEndWrittenOnce(t *testing.T, tj *trainer.TrainJob) {
	t.Helper()
	wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
	if err != nil {
		t.Fatal(err)
	}
	writes, err := localcluster.AuditEvents(cluster.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.Succeeded() && e.Verb == "patch" && e.ObjectRef != nil && e.ObjectRef.Resource == "workloads" &&
			e.ObjectRef.Subresource == "status" && e.ObjectRef.Namespace == wl.Namespace && e.ObjectRef.Name == wl.Name
	})
	if err != nil {
		t.Fatal(err)
	}
	byManager := map[string]int{}
	for _, e := range writes {
		if u, err := url.Parse(e.RequestURI); err == nil {
			byManager[u.Query().Get("fieldManager")]++
		}
	}
	if byManager[names.WaveEndFieldManager] != 1 || byManager[constants.ReclaimablePodsMgr] != 0 {
		t.Errorf("Workload status writes by field manager: %v; want the initializer's end once, as %s, and no write of the reclaimable pods alone", byManager, names.WaveEndFieldManager)
	}
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady); c == nil || c.Reason != kueue.WorkloadRecovered {
		t.Errorf("PodsReady at the end: %+v, want Recovered", c)
	}
	want := []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}}
	if diff := cmp.Diff(want, wl.Status.ReclaimablePods); diff != "" {
		t.Errorf("reclaimable pods at the end (-want +got):\n%s", diff)
	}
}

// A job whose pods can never be ready (its flavor's nodes do not exist) is
// evicted for PodsReadyTimeout, gives its quota back with exactly its
// injected entries removed, and is requeued.
func TestJobThatCanNeverBeReadyIsEvictedAndRequeued(t *testing.T) {
	ns, lq := setUp(t, false)
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(5 * time.Second)}))
	tj := fixtures.TrainJob(ns, "nowhere", "torch", lq)
	create(t, tj)

	var admittedAt time.Time
	poll.Eventually(t, time.Minute, "admitted and started", func() error {
		wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
		if err != nil {
			return err
		}
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		got := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			return err
		}
		if ptr.Deref(got.Spec.Suspend, true) {
			return fmt.Errorf("still suspended")
		}
		admittedAt = c.LastTransitionTime.Time
		return nil
	})
	poll.Eventually(t, podsReadyTimeout+time.Minute, "evicted for PodsReadyTimeout", func() error {
		wl, _ := fixtures.WorkloadOf(ctx, k8s, tj)
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.WorkloadEvictedByPodsReadyTimeout {
			return fmt.Errorf("not evicted for PodsReadyTimeout: %v", wl.Status.Conditions)
		}
		if since := c.LastTransitionTime.Sub(admittedAt); since < podsReadyTimeout-time.Second {
			t.Fatalf("evicted %v after admission, before the %v timeout", since, podsReadyTimeout)
		}
		return nil
	})
	installed := installedShape(t)
	poll.Eventually(t, time.Minute, "suspended with the admission's entries removed", func() error {
		got, err := ours(tj)
		if err != nil {
			return err
		}
		if !ptr.Deref(got.Spec.Suspend, false) {
			return fmt.Errorf("still running")
		}
		if installed.Injected(got) {
			return fmt.Errorf("injected entries left in %s", installed.Name())
		}
		return nil
	})
	poll.Eventually(t, time.Minute, "requeued", func() error {
		wl, _ := fixtures.WorkloadOf(ctx, k8s, tj)
		if wl.Status.RequeueState == nil || ptr.Deref(wl.Status.RequeueState.Count, 0) < 1 {
			return fmt.Errorf("requeue state %+v", wl.Status.RequeueState)
		}
		return nil
	})
}

// setUp is a namespace and a queue whose flavor has two 4-GPU nodes
// (withNodes) or none at all.
func setUp(t *testing.T, withNodes bool) (ns, lq string) {
	t.Helper()
	nodes := 0
	if withNodes {
		nodes = 2
	}
	return fixtures.NamespaceWithQueue(t, ctx, k8s, "podsready", nodes, 4)
}

func create(t *testing.T, objs ...client.Object) { fixtures.Create(t, ctx, k8s, objs...) }

func pods(t *testing.T, tj *trainer.TrainJob, role string) []corev1.Pod {
	t.Helper()
	list, err := fixtures.PodsOf(ctx, k8s, tj, role)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// installedShape is the override field of the installed Trainer.
func installedShape(t *testing.T) shape.Shape {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "trainjobs.trainer.kubeflow.org"}, crd); err != nil {
		t.Fatal(err)
	}
	s, err := discovery.DetectShape(crd)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ours reads tj as trainjob-kueue does, whatever the Trainer release.
func ours(tj *trainer.TrainJob) (*trainjob.TrainJob, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.TrainJobKind))
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), u); err != nil {
		return nil, err
	}
	out := &trainjob.TrainJob{}
	return out, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)
}
