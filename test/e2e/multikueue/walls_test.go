package multikueue_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
)

// On the MultiKueue manager a dispatched TrainJob has no JobSet: one made
// in its name, even controlled by the job with its real UID, is not the
// job's own and keeps Kueue's queueing (its queue name, suspended, handed
// to MultiKueue), judged as admission leaves it.
func TestASameNamedJobSetOnTheManagerStaysQueued(t *testing.T) {
	ns := setUp(t, capacity{quotaGPUs: 8, nodes: 1}, capacity{quotaGPUs: 0, nodes: 1}, 30*time.Second)
	tj := trainJob(ns, "dispatched")
	createAll(t, manager, tj)
	got := get(t, manager, tj)
	js := &jobsetapi.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tj.Name, Labels: map[string]string{constants.QueueLabel: "lq"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: got.Name, UID: got.UID, Controller: ptr.To(true)}}},
		Spec: jobsetapi.JobSetSpec{ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}},
	}
	if err := manager.Create(ctx, js, client.DryRunAll); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Trainer before v2.3 ignores managedBy and made the job's
			// own JobSet, suspended: the name is taken, nobody's to forge.
			return
		}
		t.Fatal(err)
	}
	if js.Labels[constants.QueueLabel] != "lq" || !ptr.Deref(js.Spec.Suspend, false) || ptr.Deref(js.Spec.ManagedBy, "") != kueue.MultiKueueControllerName {
		t.Errorf("a JobSet named as the dispatched job let past the queue: labels %v, suspend %v, managedBy %q",
			js.Labels, ptr.Deref(js.Spec.Suspend, false), ptr.Deref(js.Spec.ManagedBy, ""))
	}
}
