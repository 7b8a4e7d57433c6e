package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
)

// One user entry for both roles of a job whose roles Kueue admits to
// different flavors (the initializer to the CPU pool, the trainer nodes to
// the GPU pool). From Trainer v2.1 each role gets an entry of ours and runs
// on its flavor. On Trainer v2.0 a replicatedJob may be targeted by one
// entry only, so the admission must go into the user's shared entry, which
// can place both roles one way only: the job is not started, a
// SharedOverrideConflict event says why, and the quota goes back.
func TestAnEntrySharedByRolesAdmittedToDifferentFlavors(t *testing.T) {
	ns := namespace(t)
	cpus, gpus := gpuPool(ns, "cpu", 0), gpuPool(ns, "gpu", 8)
	nodesOf(t, ns, cpus, 1, 0)
	nodesOf(t, ns, gpus, 1, 8)
	// The CPU pool first: the initializer fits there, the nodes' GPUs
	// don't.
	lq := queue(t, ns, ns, cpus, gpus)
	run := fixtures.RunFor(3 * time.Second)
	tol := []corev1.Toleration{runtimeToleration}
	create(t, fixtures.TrainingRuntime(ns, "init", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run},
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(2), Tolerations: tol, Annotations: run, DependsOn: []string{"dataset-initializer"}}))

	field := overrideField()
	job := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "shared", "namespace": ns, "labels": map[string]any{fixtures.QueueLabel: lq}},
		"spec": map[string]any{
			"runtimeRef":     map[string]any{"name": "init", "kind": "TrainingRuntime", "apiGroup": "trainer.kubeflow.org"},
			fieldName(field): []any{sharedEntry(field, "dataset-initializer", "node")},
		},
	}}
	create(t, job)
	tj := fixtures.TrainJob(ns, "shared", "init", lq)
	var admitted *kueue.Workload
	eventually(t, 2*time.Minute, "admitted, each role to its pool", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if wl.Status.Admission == nil {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		got := map[kueue.PodSetReference]kueue.ResourceFlavorReference{}
		for _, a := range wl.Status.Admission.PodSetAssignments {
			got[a.Name] = a.Flavors[corev1.ResourceCPU]
		}
		if got["dataset-initializer"] != kueue.ResourceFlavorReference(ns+"-cpu") || got["node"] != kueue.ResourceFlavorReference(ns+"-gpu") {
			return fmt.Errorf("flavors %v, want the initializer on %s-cpu and the nodes on %s-gpu", got, ns, ns)
		}
		admitted = wl
		return nil
	})

	if field != "spec.podSpecOverrides" {
		waitComplete(t, tj, 3*time.Minute)
		pools := map[string]map[string]string{"dataset-initializer": cpus.Labels, "node": gpus.Labels}
		for role, labels := range pools {
			pods := podsOf(t, tj, role)
			if len(pods) == 0 {
				t.Errorf("%s: no pods", role)
			}
			for _, pod := range pods {
				node := &corev1.Node{}
				if err := k8s.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
					t.Errorf("%s: pod %s not on a node: %v", role, pod.Name, err)
					continue
				}
				for k, v := range labels {
					if node.Labels[k] != v {
						t.Errorf("%s: pod %s ran on %s, outside its flavor's nodes (%s=%s)", role, pod.Name, node.Name, k, v)
					}
				}
			}
		}
		return
	}

	eventually(t, time.Minute, "SharedOverrideConflict event", func() error {
		return fixtures.EventOn(ctx, k8s, tj, integration.ReasonSharedOverrideConflict, "admitted to different placements")
	})
	eventually(t, time.Minute, "the quota given back", func() error {
		wl := &kueue.Workload{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(admitted), wl); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("Workload not finished: %v", wl.Status.Conditions)
		}
		cq := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return err
		}
		if cq.Status.ReservingWorkloads != 0 {
			return fmt.Errorf("ClusterQueue %s still reserves quota for %d Workloads", ns, cq.Status.ReservingWorkloads)
		}
		return nil
	})
	if got := getJob(t, tj); !suspended(got) {
		t.Error("the job was started")
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods of a job that must not start", len(pods.Items))
	}
}

// fieldName is the override field's name under spec.
func fieldName(field string) string { return field[len("spec."):] }

// sharedEntry is one user entry targeting every role given, in the
// installed Trainer's override field.
func sharedEntry(field string, roles ...string) map[string]any {
	switch field {
	case "spec.runtimePatches":
		var rjs []any
		for _, r := range roles {
			rjs = append(rjs, map[string]any{"name": r, "template": map[string]any{"spec": map[string]any{"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"team": "nlp"}}}}}})
		}
		return map[string]any{"manager": "platform.example.com/defaults",
			"trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": rjs}}}}
	case "spec.podSpecOverrides":
		// No metadata in v2.0: tolerations, which replace the runtime's,
		// so the one the nodes need is kept.
		return map[string]any{"targetJobs": targetJobs(roles), "tolerations": []any{
			map[string]any{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
			map[string]any{"key": "user-extra", "operator": "Exists"},
		}}
	default:
		return map[string]any{"targetJobs": targetJobs(roles), "metadata": map[string]any{"labels": map[string]any{"team": "nlp"}}}
	}
}

func targetJobs(roles []string) []any {
	out := make([]any, 0, len(roles))
	for _, r := range roles {
		out = append(out, map[string]any{"name": r})
	}
	return out
}
