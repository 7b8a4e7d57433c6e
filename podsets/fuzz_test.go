package podsets_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// FuzzPodSets builds runtimes and TrainJobs from fuzzed numbers: whatever a
// user writes, Build never panics, reports at least one pod per PodSet when
// it succeeds, and gives the same answer twice.
func FuzzPodSets(f *testing.F) {
	f.Add(uint8(1), uint8(0), int32(1), int32(1), int32(3), true, false)
	f.Add(uint8(3), uint8(2), int32(2), int32(4), int32(0), false, true)
	f.Add(uint8(2), uint8(1), int32(-1), int32(1<<16), int32(1<<16), true, true)
	f.Fuzz(func(t *testing.T, jobs, policy uint8, parallelism, replicas, nodes int32, setNodes, launcherAsNode bool) {
		var mlPolicy *trainer.MLPolicy
		switch policy % 3 {
		case 1:
			mlPolicy = torch(ptr.To(max(parallelism, 0)))
		case 2:
			mlPolicy = mpi(ptr.To(max(replicas%8, 0)), launcherAsNode)
		}
		ancestors := []string{"trainer", "dataset-initializer", "model-initializer", ""}
		names := []string{"node", "launcher", "dataset-initializer", "model-initializer", "custom"}
		var rjs []rj
		for i := 0; i < int(jobs%6); i++ {
			rjs = append(rjs, rj{
				name:        names[i%len(names)] + string(rune('a'+i)),
				ancestor:    ancestors[i%len(ancestors)],
				parallelism: ptr.To(parallelism + int32(i)),
				replicas:    replicas,
			})
		}
		if len(rjs) > 0 && jobs%2 == 0 {
			rjs[len(rjs)-1].name = "node"
		}
		rt := runtimeOf(mlPolicy, rjs...)
		job := jobWith(nil)
		if setNodes {
			job = jobWith(numNodes(nodes))
		}
		first, err := podsets.Build(job, rt, shape.PodTemplateOverrides{}, podsets.Options{Topology: discovery.KueueTopology()})
		second, err2 := podsets.Build(job, rt, shape.PodTemplateOverrides{}, podsets.Options{Topology: discovery.KueueTopology()})
		if (err == nil) != (err2 == nil) || !equality.Semantic.DeepEqual(first, second) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		if len(first) != len(rjs) {
			t.Fatalf("%d PodSets for %d replicatedJobs", len(first), len(rjs))
		}
		for _, ps := range first {
			if ps.Count < 1 {
				t.Fatalf("PodSet %s has count %d", ps.Name, ps.Count)
			}
		}
	})
}
