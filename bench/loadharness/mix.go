package loadharness

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// The runtimes of the mix a busy cluster has, in the order jobs cycle
// through them (RuntimeOf).
const (
	TorchWithInitializers = "torch-init"
	MPI                   = "mpi"
	Torch                 = "torch"
)

var mix = [...]string{TorchWithInitializers, MPI, Torch}

// JobName of the i-th job of a load.
func JobName(i int) string { return fmt.Sprintf("job-%05d", i) }

// RuntimeOf the i-th job: the mix is deterministic, so two runs of one N
// queue the same jobs.
func RuntimeOf(i int) string { return mix[i%len(mix)] }

// RunFor is the annotations on a pod template that make kwok complete its
// pods between d and d plus a second after they start.
func RunFor(d time.Duration) map[string]string {
	return map[string]string{
		"pod-complete.stage.kwok.x-k8s.io/delay":        d.String(),
		"pod-complete.stage.kwok.x-k8s.io/jitter-delay": (d + time.Second).String(),
	}
}

// Runtimes of the mix in namespace ns, every pod template annotated with
// run (RunFor): torch whose trainer nodes wait for the initializers named
// (Trainer's ancestors, e.g. dataset-initializer), MPI with a launcher, and
// plain torch. Initializers and the launcher ask for a CPU, each GPU node
// for a CPU and a GPU: a job books two GPUs, two, one (GPUsOf).
func Runtimes(ns string, run map[string]string, initializers ...string) []*trainer.TrainingRuntime {
	cpu := fixtures.CPUs("1")
	gpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), fixtures.GPU: resource.MustParse("1")}
	var withInit []fixtures.Role
	for _, name := range initializers {
		withInit = append(withInit, fixtures.Role{Name: name, Ancestor: name, Requests: cpu, Annotations: run})
	}
	withInit = append(withInit, fixtures.Role{Name: "node", Ancestor: "trainer", Requests: gpu, Annotations: run, DependsOn: initializers})
	return []*trainer.TrainingRuntime{
		fixtures.TrainingRuntime(ns, TorchWithInitializers, fixtures.TorchPolicy(2), withInit...),
		fixtures.TrainingRuntime(ns, MPI, fixtures.MPIPolicy(2, false),
			fixtures.Role{Name: "launcher", Ancestor: "trainer", Requests: cpu, Annotations: run},
			fixtures.Role{Name: "node", Requests: gpu, Annotations: run}),
		fixtures.TrainingRuntime(ns, Torch, fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: gpu, Annotations: run}),
	}
}

// GPUsOf the i-th job: what Kueue books for it (Runtimes).
func GPUsOf(i int) int64 { return []int64{2, 2, 1}[i%len(mix)] }
