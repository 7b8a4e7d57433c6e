package e2e_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// kueue#10487's class. A 4-node × 8-GPU job, gang scheduled by the
// ClusterQueue's setting, runs whole; two of its trainer pods succeed (as
// a kubelet reports them); a high-priority job preempts it and completes.
// Re-admitted, its trainer Job creates only the two pods that did not
// succeed: its gang must be those two, or they wait for ever while the job
// holds 32 GPUs of quota.
func TestGangReadmittedAfterSomeIndexesSucceededStartsTheRest(t *testing.T) {
	onSchedulerPlugins(t)
	ns := namespace(t)
	p := gpuPool(ns, "gang", 32)
	nodesOf(t, ns, p, 4, 8)
	lq := gangQueue(t, ns, p)
	for name, value := range map[string]int32{ns + "-low": 10, ns + "-high": 1000} {
		create(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	tol := []corev1.Toleration{runtimeToleration}
	create(t,
		fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(4),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: tol, Priority: ns + "-low", Annotations: fixtures.RunFor(time.Hour)}),
		fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(4),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: tol, Priority: ns + "-high", Annotations: fixtures.RunFor(5 * time.Second)}))
	low := fixtures.TrainJob(ns, "low", "long", lq.Name)
	create(t, low)
	if overrideField() == "spec.podSpecOverrides" {
		// Trainer v2.0 can't carry the PodGroup label: refused, not started.
		eventually(t, time.Minute, "refused", func() error {
			return fixtures.EventOn(ctx, k8s, low, gang.ReasonGangUnsupported, "Trainer v2.0")
		})
		return
	}
	eventually(t, 2*time.Minute, "the low job runs whole", func() error {
		if n := runningPods(t, low); n != 4 {
			return fmt.Errorf("%d of 4 pods running", n)
		}
		return nil
	})
	// Indexes 0 and 1 succeed.
	for _, pod := range podsOf(t, low, "node") {
		if i := pod.Labels[batchv1.JobCompletionIndexAnnotation]; i == "0" || i == "1" {
			succeed(t, &pod)
		}
	}
	eventually(t, time.Minute, `completedIndexes "0,1"`, func() error {
		j := trainerJob(t, low)
		if j.Status.CompletedIndexes != "0,1" {
			return fmt.Errorf("completedIndexes %q", j.Status.CompletedIndexes)
		}
		return nil
	})

	high := fixtures.TrainJob(ns, "high", "short", lq.Name)
	create(t, high)
	eventually(t, 2*time.Minute, "the low job preempted", func() error {
		if !suspended(getJob(t, low)) {
			return fmt.Errorf("still running")
		}
		return nil
	})
	waitComplete(t, high, 3*time.Minute)

	// Re-admitted: the pods of indexes 2 and 3, and a gang of two.
	eventually(t, 2*time.Minute, "the low job's remaining pods run", func() error {
		if suspended(getJob(t, low)) {
			return fmt.Errorf("not re-admitted yet")
		}
		var indexes []string
		for _, pod := range podsOf(t, low, "node") {
			if pod.Status.Phase == corev1.PodRunning {
				indexes = append(indexes, pod.Labels[batchv1.JobCompletionIndexAnnotation])
			}
		}
		slices.Sort(indexes)
		if !slices.Equal(indexes, []string{"2", "3"}) {
			pg := &schedv1alpha1.PodGroup{}
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: low.Name}, pg)
			return fmt.Errorf("running indexes %v, want [2 3]; PodGroup minMember %d", indexes, pg.Spec.MinMember)
		}
		return nil
	})
	pg := &schedv1alpha1.PodGroup{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: low.Name}, pg); err != nil {
		t.Fatal(err)
	}
	if pg.Spec.MinMember != 2 {
		t.Errorf("PodGroup minMember %d, want 2: the pods created again", pg.Spec.MinMember)
	}
	for _, pod := range podsOf(t, low, "node") {
		if pod.Status.Phase == corev1.PodRunning {
			succeed(t, &pod)
		}
	}
	waitComplete(t, low, 2*time.Minute)
}

// runningPods counts tj's trainer pods that run.
func runningPods(t *testing.T, tj *trainer.TrainJob) int {
	t.Helper()
	n := 0
	for _, pod := range podsOf(t, tj, "node") {
		if pod.Status.Phase == corev1.PodRunning {
			n++
		}
	}
	return n
}

// succeed reports pod Succeeded, as its kubelet would.
func succeed(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	patch := []byte(`{"status":{"phase":"Succeeded","conditions":[{"type":"Ready","status":"False","reason":"PodCompleted"}]}}`)
	if err := k8s.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		t.Fatalf("pod %s succeeded: %v", pod.Name, err)
	}
}

// trainerJob is the batch Job of tj's trainer nodes.
func trainerJob(t *testing.T, tj *trainer.TrainJob) *batchv1.Job {
	t.Helper()
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(tj.Namespace), client.MatchingLabels{jobsetapi.JobSetNameKey: tj.Name, jobsetapi.ReplicatedJobNameKey: "node"}); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Fatalf("%d trainer Jobs of %s, want 1", len(jobs.Items), tj.Name)
	}
	return &jobs.Items[0]
}
