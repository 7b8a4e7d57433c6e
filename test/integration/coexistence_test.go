package integration_test

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Kueue runs its batch/job and JobSet integrations next to us, with the
// configuration we ship (built-in TrainJob off, TrainJob not listed as an
// external framework, manageJobsWithoutQueueName false): Trainer's JobSets
// and Jobs are left to Trainer, and the admins' own queued Jobs still queue.
func TestKueuesOwnIntegrationsCoexist(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	create(t, trainingRuntime(ns, "rt", torchPolicy(2), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "train", "rt", lq)
	create(t, tj)
	waitRunning(t, tj)
	jobSetOf(t, tj)

	consistently(t, "one Workload, Trainer's JobSet left alone", 2*time.Second, func() error {
		var wls kueue.WorkloadList
		if err := k8s.List(ctx, &wls, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, wl := range wls.Items {
			if owner := metav1.GetControllerOf(&wl); owner == nil || owner.Kind != "TrainJob" {
				return fmt.Errorf("Workload %s is owned by %v, not the TrainJob", wl.Name, owner)
			}
		}
		if len(wls.Items) != 1 {
			return fmt.Errorf("%d Workloads for one TrainJob", len(wls.Items))
		}
		js := &jobsetapi.JobSet{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), js); err != nil {
			return err
		}
		if ptr.Deref(js.Spec.Suspend, false) {
			return fmt.Errorf("Kueue suspended Trainer's JobSet")
		}
		return nil
	})

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain", Labels: map[string]string{"kueue.x-k8s.io/queue-name": lq}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox", Resources: withLimits(cpus("1"))}},
		}}},
	}
	create(t, job)
	if !ptr.Deref(job.Spec.Suspend, false) {
		t.Errorf("Kueue's Job webhook did not suspend a queued batch Job")
	}
	eventually(t, "the batch Job is admitted by Kueue", func() error {
		got := &batchv1.Job{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return err
		}
		if ptr.Deref(got.Spec.Suspend, true) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
}
