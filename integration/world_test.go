package integration

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The objects a reconcile observes, as the tests of this package build
// them.

// queuedJob is TrainJob ns/j, suspended and queued in LocalQueue lq,
// naming TrainingRuntime torch.
func queuedJob(ns string) *trainjob.TrainJob {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", UID: "uid", Labels: map[string]string{"kueue.x-k8s.io/queue-name": "lq"}}}
	job.Spec.Suspend = ptr.To(true)
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	return job
}

// torchRuntime is TrainingRuntime ns/torch of one node whose container
// asks for resources.
func torchRuntime(ns string, resources corev1.ResourceRequirements) *trainer.TrainingRuntime {
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x", Resources: resources}}
	return rt
}

// ownedWorkload is job's Workload as the job framework names and owns it;
// reserved: it holds quota in ClusterQueue cq.
func ownedWorkload(job *trainjob.TrainJob, reserved bool) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, trainjob.GVK),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}}}
	if reserved {
		wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}}
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	}
	return wl
}
