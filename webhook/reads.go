package webhook

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// CachedReads are the kinds the webhooks read through the manager's
// informer cache: the job and its runtime, the queue it names and where
// that leads (MultiKueue), its namespace. The children webhooks read
// TrainJobs from it too, and their other owners (Jobs, JobSets) from the
// API server (lineage).
//
// A replica is ready for webhook calls only once these are synced
// (cmd/trainjob-kueue). Otherwise a fresh replica (a mode change restarts
// one in process) makes the informer in its first call and must sync it
// within that call's deadline: "Timeout: failed waiting for
// *v1beta2.ClusterQueue Informer to sync", a refused create seen in the
// MultiKueue switch e2e. The same in either mode: what a webhook does
// depends on the object, not on the replica's mode.
func CachedReads() []client.Object {
	return []client.Object{
		&trainjob.TrainJob{}, &trainer.TrainingRuntime{}, &trainer.ClusterTrainingRuntime{},
		&kueue.LocalQueue{}, &kueue.ClusterQueue{}, &kueue.AdmissionCheck{}, &corev1.Namespace{},
	}
}
