package integration

import (
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// released: the job's Workload is finished and has given its quota back
// (Kueue's resource-in-use finalizer is off it), and the job is not being
// deleted. All Kueue's job framework does for such a job is say
// FinishedWorkload once more, on every change of the job or its Workload:
// Trainer's last status writes and our own finalizer removal brought two
// or three such reconciles per job, each a full observation and an event
// request (docs/benchmark.md). Skip ends them at the observation's first
// read. A job being deleted is left to the framework, which removes what
// finalizers remain.
func released(job *trainjob.TrainJob, wl *kueue.Workload) bool {
	return wl != nil && job.DeletionTimestamp.IsZero() && workloadFinished(wl) &&
		!controllerutil.ContainsFinalizer(wl, kueue.ResourceInUseFinalizerName)
}
