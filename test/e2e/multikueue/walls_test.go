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

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// On the MultiKueue manager a dispatched TrainJob has no JobSet: one made
// in its name, even controlled by the job with its real UID, is not the
// job's own and keeps Kueue's queueing (its queue name, suspended, handed
// to MultiKueue), judged as admission leaves it.
//
// The manager alone is set up: the job need not reach a worker, and a
// worker an earlier test stopped must not fail this one.
func TestASameNamedJobSetOnTheManagerStaysQueued(t *testing.T) {
	ns := setUpManagerOnly(t)
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

// setUpManagerOnly makes a namespace on the manager with a ClusterQueue
// that dispatches through MultiKueue, its LocalQueue lq and runtime torch;
// the workers are not touched.
func setUpManagerOnly(t *testing.T) string {
	t.Helper()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "mk-"}}
	if err := manager.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	flavors, cq, lq := fixtures.Queue(ns, ns, fixtures.Pool{Name: "gpu", GPUs: 64})
	draQuota(cq, 64)
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: localcluster.MultiKueueCheck}}}
	createAll(t, manager, append(asObjects(flavors), cq, lq, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(2),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(30 * time.Second)}))...)
	fixtures.WaitActive(t, ctx, manager, ns, 30*time.Second)
	return ns
}
