package webhook

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// CachedReads are the kinds the webhooks read through the manager's
// informer cache in the mode opts give: the job and its runtime, the
// queue it names and where that leads (MultiKueue), its namespace, and
// (taking TrainJobs over) the Workload whose admission a pod follows.
//
// A replica is ready for webhook calls only once these are synced
// (cmd/trainjob-kueue). Otherwise a fresh replica (a mode change restarts
// one in process) makes the informer in its first call and must sync it
// within that call's deadline: "Timeout: failed waiting for
// *v1beta2.ClusterQueue Informer to sync", a refused create seen in the
// MultiKueue switch e2e. The Workload informer, the largest, is left to
// the standby's Kueue: standing by, the pod webhook reads none.
func CachedReads(opts integration.Options) []client.Object {
	reads := []client.Object{
		&trainjob.TrainJob{}, &trainer.TrainingRuntime{}, &trainer.ClusterTrainingRuntime{},
		&kueue.LocalQueue{}, &kueue.ClusterQueue{}, &kueue.AdmissionCheck{}, &corev1.Namespace{},
	}
	if !opts.BuiltInTrainJob {
		reads = append(reads, &kueue.Workload{})
	}
	return reads
}
