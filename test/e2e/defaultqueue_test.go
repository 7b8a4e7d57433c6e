package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// In a namespace with a LocalQueue named default, with Kueue's JobSet and
// pod integrations on (as the local cluster runs Kueue, and as Kueue's
// default configuration has them), an unlabelled TrainJob is queued once:
// its own Workload, and never one for its JobSet or its pods, at every
// poll until it completes; its JobSet carries no queue name and no pod
// is taken by Kueue's pod integration.
func TestADefaultLocalQueueQueuesATrainJobOnce(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "a100", 8)
	nodesOf(t, ns, pool, 1, 8)
	flavors, cq, lq := fixtures.Queue(ns, ns, pool)
	lq.Name = string(constants.DefaultLocalQueueName)
	for _, rf := range flavors {
		create(t, rf)
	}
	create(t, cq, lq)
	run := fixtures.RunFor(5 * time.Second)
	tol := []corev1.Toleration{runtimeToleration}
	create(t, fixtures.TrainingRuntime(ns, "torch-init", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run},
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run, DependsOn: []string{"dataset-initializer"}}))
	tj := fixtures.TrainJob(ns, "unlabelled", "torch-init", "")
	tj.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2), ResourcesPerNode: ptr.To(fixtures.WithLimits(fixtures.GPUs(2)))}
	create(t, tj)
	if got := getJob(t, tj).Labels[constants.QueueLabel]; got != lq.Name {
		t.Fatalf("the unlabelled TrainJob was given queue %q, want %q", got, lq.Name)
	}
	queuedOnce := func() error {
		twice, err := fixtures.QueuedOnce(ctx, k8s, ns)
		for _, e := range twice {
			t.Error(e)
		}
		return err
	}
	eventually(t, 4*time.Minute, tj.Name+" complete, queued once at every poll", func() error {
		if err := queuedOnce(); err != nil {
			return err
		}
		if t.Failed() {
			t.FailNow()
		}
		got := getJob(t, tj)
		if !apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobComplete) {
			return fmt.Errorf("not complete: %v", got.Status.Conditions)
		}
		return nil
	})
	if wl := workloadOf(t, tj); wl.Spec.QueueName != kueue.LocalQueueName(lq.Name) {
		t.Errorf("the TrainJob's Workload is on queue %q, want %q", wl.Spec.QueueName, lq.Name)
	}
}
