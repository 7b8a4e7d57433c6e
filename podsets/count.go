package podsets

import (
	"fmt"
	batchv1 "k8s.io/api/batch/v1"
	"math"

	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// podsPerReplica is the parallelism Trainer gives replicatedJob rj, following
// the rules of Trainer's runtime core and its torch, mpi and plainml plugins:
//   - every job starts from its own parallelism (default 1);
//   - the trainer-ancestor job of a runtime with an mlPolicy starts from
//     mlPolicy.numNodes (default 1) instead;
//   - that start is at least 1: Trainer rewrites a parallelism of 0 to 1
//     (runtime.WithPodSet), so such a job runs one pod and books one;
//   - torch and plain runtimes: spec.trainer.numNodes, when set, replaces the
//     trainer-ancestor job's count;
//   - MPI: spec.trainer.numNodes goes to the job named "node" (minus the
//     launcher with runLauncherAsNode, at least 1); the launcher, which is the
//     trainer ancestor, keeps mlPolicy.numNodes.
func podsPerReplica(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, name, ancestor string, parallelism *int32) (int32, error) {
	count := ptr.Deref(parallelism, 1)
	if ancestor == AncestorTrainer && rt.MLPolicy != nil {
		count = ptr.Deref(rt.MLPolicy.NumNodes, 1)
	}
	count = max(count, 1)
	if numNodes := trainerNumNodes(job); numNodes != nil {
		if *numNodes < 1 {
			return 0, fmt.Errorf("spec.trainer.numNodes is %d: it must be at least 1", *numNodes)
		}
		switch {
		case isMPI(rt):
			if name == NodeName {
				count = *numNodes
				if runLauncherAsNode(rt) {
					count = max(*numNodes-1, 1)
				}
			}
		case ancestor == AncestorTrainer:
			count = *numNodes
		}
	}
	return count, nil
}

// replicas is how many Jobs JobSet creates for the role. Trainer pins its
// own steps (initializers and trainer) to one; custom jobs keep theirs.
func replicas(name, ancestor string, declared int32) (int32, error) {
	switch ancestor {
	case AncestorTrainer, AncestorDatasetInitializer, AncestorModelInitializer:
		return 1, nil
	}
	if declared == 0 {
		// JobSet defaults an unset replicas to 1.
		return 1, nil
	}
	if declared < 1 {
		return 0, fmt.Errorf("replicatedJob %q has replicas %d: it must be at least 1", name, declared)
	}
	return declared, nil
}

func podCount(name string, replicas, perReplica int32) (int32, error) {
	total := int64(replicas) * int64(perReplica)
	if total > math.MaxInt32 {
		return 0, fmt.Errorf("replicatedJob %q would run %d pods, more than a PodSet can hold", name, total)
	}
	return int32(total), nil
}

// maxIndexedParallelism is Kubernetes' limit on an Indexed Job's
// parallelism (pkg/apis/batch/validation): JobSet's Job would be refused,
// and the job would hold its quota without a pod.
const maxIndexedParallelism = 100000

func indexedJobLimit(name string, mode *batchv1.CompletionMode, perReplica int32) error {
	if mode != nil && *mode == batchv1.IndexedCompletion && perReplica > maxIndexedParallelism {
		return fmt.Errorf("replicatedJob %q would run %d pods in one Indexed Job: Kubernetes allows at most %d", name, perReplica, maxIndexedParallelism)
	}
	return nil
}

func trainerNumNodes(job *trainjob.TrainJob) *int32 {
	if job.Spec.Trainer == nil {
		return nil
	}
	return job.Spec.Trainer.NumNodes
}

func isMPI(rt *trainer.TrainingRuntimeSpec) bool {
	return rt.MLPolicy != nil && rt.MLPolicy.MPI != nil
}

func runLauncherAsNode(rt *trainer.TrainingRuntimeSpec) bool {
	return isMPI(rt) && ptr.Deref(rt.MLPolicy.MPI.RunLauncherAsNode, false)
}
