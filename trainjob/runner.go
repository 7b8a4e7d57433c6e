package trainjob

import (
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// GVK of TrainJobs.
var GVK = trainer.GroupVersion.WithKind(trainer.TrainJobKind)

const (
	// TrainerControllerName is Trainer's default spec.managedBy: Trainer's
	// controller runs the job on this cluster.
	TrainerControllerName = "trainer.kubeflow.org/trainjob-controller"
	// MultiKueueControllerName is the spec.managedBy that hands the job to
	// Kueue's MultiKueue (kueue.MultiKueueControllerName).
	MultiKueueControllerName = "kueue.x-k8s.io/multikueue"
)

// Runner is who runs a TrainJob, by its spec.managedBy.
type Runner int

const (
	// RunLocally: Trainer's controller runs the job here; Kueue queues it
	// here and it is started on admission.
	RunLocally Runner = iota
	// RunRemotely: MultiKueue dispatches the job to a worker cluster. Here
	// it gets its Workload and nothing else: it is never unsuspended,
	// injected or otherwise written, so even a Trainer that ignores
	// managedBy (before v2.3) has nothing to run.
	RunRemotely
	// RunElsewhere: another controller owns the job altogether.
	RunElsewhere
)

func (r Runner) String() string {
	switch r {
	case RunLocally:
		return "here"
	case RunRemotely:
		return "MultiKueue"
	default:
		return "another controller"
	}
}

// RunnerOf is who runs a job whose spec.managedBy is managedBy.
func RunnerOf(managedBy *string) Runner {
	switch ptr.Deref(managedBy, TrainerControllerName) {
	case TrainerControllerName:
		return RunLocally
	case MultiKueueControllerName:
		return RunRemotely
	default:
		return RunElsewhere
	}
}

// Runner is who runs the job.
func (j *TrainJob) Runner() Runner { return RunnerOf(j.Spec.ManagedBy) }
