package integration_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// The Workload's PodSets must be what Trainer really runs: per
// replicatedJob, the JobSet's replicas × parallelism and the container
// requests, whatever the runtime looks like.
func TestWorkloadPodSetsMatchTheJobSetTrainerCreates(t *testing.T) {
	cases := map[string]struct {
		policy   *trainer.MLPolicy
		roles    []role
		numNodes *int32
		want     []podSetShape
	}{
		"mpi without runLauncherAsNode": {
			policy: mpiPolicy(1, false),
			roles: []role{
				{Name: "launcher", Ancestor: "trainer", Requests: cpus("1")},
				{Name: "node", Requests: gpus(2)},
			},
			numNodes: ptr.To[int32](4),
			want:     []podSetShape{{"launcher", 1, 0, "1"}, {"node", 4, 2, "1"}},
		},
		"mpi with runLauncherAsNode": {
			policy: mpiPolicy(1, true),
			roles: []role{
				{Name: "launcher", Ancestor: "trainer", Requests: gpus(2)},
				{Name: "node", Requests: gpus(2)},
			},
			numNodes: ptr.To[int32](4),
			want:     []podSetShape{{"launcher", 1, 2, "1"}, {"node", 3, 2, "1"}},
		},
		"dataset and model initializers": {
			policy: torchPolicy(1),
			roles: []role{
				{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: cpus("2")},
				{Name: "model-initializer", Ancestor: "model-initializer", Requests: cpus("3")},
				{Name: "node", Ancestor: "trainer", Requests: gpus(1), DependsOn: []string{"dataset-initializer", "model-initializer"}},
			},
			numNodes: ptr.To[int32](2),
			want:     []podSetShape{{"dataset-initializer", 1, 0, "2"}, {"model-initializer", 1, 0, "3"}, {"node", 2, 1, "1"}},
		},
		"a custom extra replicatedJob": {
			policy: torchPolicy(2),
			roles: []role{
				{Name: "node", Ancestor: "trainer", Requests: gpus(1)},
				{Name: "evaluator", Replicas: 2, Parallelism: 3, Requests: cpus("1")},
			},
			want: []podSetShape{{"node", 2, 1, "1"}, {"evaluator", 6, 0, "1"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			lq := queue(t, ns, pool{Name: "gpu", GPUs: 64})
			create(t, trainingRuntime(ns, "rt", tc.policy, tc.roles...))
			tj := trainJob(ns, "job", "rt", lq)
			if tc.numNodes != nil {
				tj.Spec.Trainer = &trainer.Trainer{NumNodes: tc.numNodes}
			}
			create(t, tj)
			wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
			if diff := cmp.Diff(tc.want, shapeOf(wl.Spec.PodSets)); diff != "" {
				t.Fatalf("Workload PodSets (-want +got):\n%s", diff)
			}
			waitRunning(t, tj)
			js := jobSetOf(t, tj)
			if err := sameAsJobSet(wl.Spec.PodSets, js); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// sameAsJobSet compares PodSets with the JobSet Trainer created: pods per
// replicatedJob and the requests of each container.
func sameAsJobSet(podSets []kueue.PodSet, j *jobsetapi.JobSet) error {
	if len(podSets) != len(j.Spec.ReplicatedJobs) {
		return fmt.Errorf("%d PodSets for %d replicatedJobs", len(podSets), len(j.Spec.ReplicatedJobs))
	}
	for i, ps := range podSets {
		rj := j.Spec.ReplicatedJobs[i]
		pods := rj.Replicas * ptr.Deref(rj.Template.Spec.Parallelism, 1)
		if string(ps.Name) != rj.Name || ps.Count != pods {
			return fmt.Errorf("PodSet %s×%d, JobSet runs %s with %d pods", ps.Name, ps.Count, rj.Name, pods)
		}
		for c := range rj.Template.Spec.Template.Spec.Containers {
			have := ps.Template.Spec.Containers[c].Resources.Requests
			runs := rj.Template.Spec.Template.Spec.Containers[c].Resources.Requests
			if !have.Cpu().Equal(*runs.Cpu()) || !have.Name(gpu, "0").Equal(*runs.Name(gpu, "0")) {
				return fmt.Errorf("%s container %d: PodSet requests %v, pods request %v", ps.Name, c, have, runs)
			}
		}
	}
	return nil
}
