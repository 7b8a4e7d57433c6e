package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
)

// Every node of these tests is tainted dedicated=ml: only pods that keep the
// runtime's toleration can run. Each pool adds its own taint, tolerated by
// its flavor: only pods that got the flavor's toleration can run there.
var runtimeToleration = corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}

func gpuPool(ns, name string, gpus int64) fixtures.Pool {
	return fixtures.Pool{
		Name:   name,
		Labels: map[string]string{"e2e.trainjob-kueue.dev/pool": ns + "-" + name},
		Taints: []corev1.Toleration{
			{Key: "e2e.trainjob-kueue.dev/pool", Operator: corev1.TolerationOpEqual, Value: name, Effect: corev1.TaintEffectNoSchedule},
		},
		GPUs: gpus,
	}
}

// nodesOf creates the pool's nodes, tainted for the runtime too.
func nodesOf(t *testing.T, ns string, p fixtures.Pool, count int, gpus int64) {
	t.Helper()
	tainted := p
	tainted.Taints = append([]corev1.Toleration{runtimeToleration}, p.Taints...)
	nodes(t, ns, tainted, count, gpus)
}

func TestGPUTrainJobsRunWholeOnTheirFlavorsAndComplete(t *testing.T) {
	ns := namespace(t)
	a100, h100 := gpuPool(ns, "a100", 16), gpuPool(ns, "h100", 16)
	nodesOf(t, ns, a100, 2, 8)
	nodesOf(t, ns, h100, 2, 8)
	lq := queue(t, ns, ns, a100, h100)
	run := fixtures.RunFor(5 * time.Second)
	tol := []corev1.Toleration{runtimeToleration}
	create(t,
		fixtures.TrainingRuntime(ns, "torch-init", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("2"), Tolerations: tol, Annotations: run},
			// A chain: JobSet before v0.10 takes one dependency per job.
			fixtures.Role{Name: "model-initializer", Ancestor: "model-initializer", Requests: fixtures.CPUs("2"), Tolerations: tol, Annotations: run, DependsOn: []string{"dataset-initializer"}},
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run, DependsOn: []string{"model-initializer"}}),
		fixtures.TrainingRuntime(ns, "mpi", fixtures.MPIPolicy(1, false),
			fixtures.Role{Name: "launcher", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run},
			fixtures.Role{Name: "node", Requests: fixtures.GPUs(4), Tolerations: tol, Annotations: run}),
		fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run}),
	)
	withInit := fixtures.TrainJob(ns, "llm-init", "torch-init", lq)
	withInit.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2), ResourcesPerNode: ptr.To(fixtures.WithLimits(fixtures.GPUs(4)))}
	mpi := fixtures.TrainJob(ns, "mpi", "mpi", lq)
	mpi.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
	torch := fixtures.TrainJob(ns, "torch", "torch", lq)
	torch.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](1), ResourcesPerNode: ptr.To(fixtures.WithLimits(fixtures.GPUs(8)))}
	jobs := []*trainer.TrainJob{withInit, mpi, torch}
	create(t, withInit, mpi, torch)

	admitted := map[string]*kueue.Workload{}
	for _, tj := range jobs {
		eventually(t, 2*time.Minute, tj.Name+" admitted", func() error {
			wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
			if !workload.IsAdmitted(wl) {
				return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
			}
			admitted[tj.Name] = wl
			return nil
		})
	}
	for _, tj := range jobs {
		waitComplete(t, tj, 4*time.Minute)
	}
	flavors := map[string]fixtures.Pool{ns + "-a100": a100, ns + "-h100": h100}
	for _, tj := range jobs {
		wl := admitted[tj.Name]
		for i, ps := range wl.Spec.PodSets {
			pods := podsOf(t, tj, string(ps.Name))
			if int32(len(pods)) != ps.Count {
				t.Errorf("%s/%s: the Workload reserved %d pods, Trainer ran %d", tj.Name, ps.Name, ps.Count, len(pods))
			}
			want := quota.PodRequests(&ps.Template.Spec)
			assignment := wl.Status.Admission.PodSetAssignments[i]
			flavor := flavors[string(assignment.Flavors[corev1.ResourceCPU])]
			for p := range pods {
				pod := &pods[p]
				if got := quota.PodRequests(&pod.Spec); !equality.Semantic.DeepEqual(want, got) {
					t.Errorf("%s/%s: pod %s requests %v, the Workload reserved %v", tj.Name, ps.Name, pod.Name, got, want)
				}
				node := &corev1.Node{}
				if err := k8s.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
					t.Errorf("%s: pod %s not on a node: %v", tj.Name, pod.Name, err)
					continue
				}
				for k, v := range flavor.Labels {
					if node.Labels[k] != v {
						t.Errorf("%s/%s: pod %s ran on %s, outside its flavor %s", tj.Name, ps.Name, pod.Name, node.Name, assignment.Flavors[corev1.ResourceCPU])
					}
				}
				for _, want := range append([]corev1.Toleration{runtimeToleration}, flavor.Taints...) {
					if !hasToleration(pod, want) {
						t.Errorf("%s/%s: pod %s lacks toleration %v", tj.Name, ps.Name, pod.Name, want)
					}
				}
			}
		}
	}
}

func TestPriorityPreemptionSuspendsAndRestores(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "gpu", 8)
	nodesOf(t, ns, pool, 1, 8)
	lq := queue(t, ns, ns, pool)
	for name, value := range map[string]int32{ns + "-low": 10, ns + "-high": 1000} {
		create(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	tol := []corev1.Toleration{runtimeToleration}
	create(t,
		fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: tol, Priority: ns + "-low", Annotations: fixtures.RunFor(10 * time.Minute)}),
		fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: tol, Priority: ns + "-high", Annotations: fixtures.RunFor(5 * time.Second)}))
	// The user's own override entry, in the field the installed Trainer
	// has, plus a field no Go type of ours models.
	field, entries := userEntries()
	low := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "low", "namespace": ns, "labels": map[string]any{fixtures.QueueLabel: lq}},
		"spec": map[string]any{
			"runtimeRef": map[string]any{"name": "long", "kind": "TrainingRuntime", "apiGroup": "trainer.kubeflow.org"},
			field:        entries,
		},
	}}
	create(t, low)
	// The baseline is what the API server stored: Trainer's webhook may add
	// to the user's entries (v2.3 stamps a time on runtime patches).
	entries = low.Object["spec"].(map[string]any)[field].([]any)
	lowJob := fixtures.TrainJob(ns, "low", "long", lq)
	eventually(t, 2*time.Minute, "low job's pod running", func() error {
		for _, p := range podsOf(t, lowJob, "node") {
			if p.Status.Phase == corev1.PodRunning {
				return nil
			}
		}
		return fmt.Errorf("no running pod")
	})

	high := fixtures.TrainJob(ns, "high", "short", lq)
	create(t, high)
	eventually(t, 2*time.Minute, "low job preempted and restored", func() error {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(low.GroupVersionKind())
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(low), got); err != nil {
			return err
		}
		spec := got.Object["spec"].(map[string]any)
		if suspend, _ := spec["suspend"].(bool); !suspend {
			return fmt.Errorf("not suspended")
		}
		if diff := cmp.Diff(entries, spec[field]); diff != "" {
			return fmt.Errorf("%s not back to the user's (-user +now):\n%s", field, diff)
		}
		return nil
	})
	waitComplete(t, high, 3*time.Minute)
	eventually(t, 2*time.Minute, "low job admitted again", func() error {
		if got := getJob(t, lowJob); suspended(got) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
}

func TestFinishedInitializersFreeQuotaForAWaitingJob(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "cpu", 0)
	pool.CPUs = "10"
	nodesOf(t, ns, pool, 1, 0)
	lq := queue(t, ns, ns, pool)
	tol := []corev1.Toleration{runtimeToleration}
	create(t,
		fixtures.TrainingRuntime(ns, "init", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("4"), Tolerations: tol, Annotations: fixtures.RunFor(5 * time.Second)},
			fixtures.Role{Name: "model-initializer", Ancestor: "model-initializer", Requests: fixtures.CPUs("4"), Tolerations: tol, Annotations: fixtures.RunFor(5 * time.Second), DependsOn: []string{"dataset-initializer"}},
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: fixtures.RunFor(10 * time.Minute), DependsOn: []string{"model-initializer"}}),
		fixtures.TrainingRuntime(ns, "big", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("8"), Tolerations: tol, Annotations: fixtures.RunFor(5 * time.Second)}))
	first := fixtures.TrainJob(ns, "first", "init", lq)
	create(t, first)
	eventually(t, time.Minute, "first admitted", func() error {
		if !workload.IsAdmitted(fixtures.WaitWorkload(t, ctx, k8s, first)) {
			return fmt.Errorf("not admitted")
		}
		return nil
	})
	// 9 of 10 CPUs reserved: the second job (8) must wait...
	second := fixtures.TrainJob(ns, "second", "big", lq)
	create(t, second)
	if wl := fixtures.WaitWorkload(t, ctx, k8s, second); workload.IsAdmitted(wl) {
		t.Fatalf("second job admitted while the first held 9 of 10 CPUs")
	}
	// ...until the initializers finish and their 8 CPUs are reclaimed.
	eventually(t, 3*time.Minute, "second admitted with the first still running", func() error {
		if !workload.IsAdmitted(fixtures.WaitWorkload(t, ctx, k8s, second)) {
			return fmt.Errorf("second not admitted; first reclaimable: %v", fixtures.WaitWorkload(t, ctx, k8s, first).Status.ReclaimablePods)
		}
		return nil
	})
	if got := getJob(t, first); condition(got, trainer.TrainJobComplete) || suspended(got) {
		t.Errorf("the first job should still be running its trainer node")
	}
	waitComplete(t, second, 3*time.Minute)
}
