package e2e_test

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// In a namespace with a LocalQueue named default, with Kueue's JobSet and
// pod integrations on (as the local cluster runs Kueue, and as Kueue's
// default configuration has them), an unlabelled TrainJob is queued once:
// its own Workload, and never one for its JobSet or its pods, at every
// poll until it completes; its JobSet carries no queue name and no pod
// is taken by Kueue's pod integration.
func TestADefaultLocalQueueQueuesATrainJobOnce(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "a100", 8)
	nodesOf(t, ns, pool, 1, 8)
	flavors, cq, lq := fixtures.Queue(ns, ns, pool)
	lq.Name = string(constants.DefaultLocalQueueName)
	for _, rf := range flavors {
		create(t, rf)
	}
	create(t, cq, lq)
	run := fixtures.RunFor(5 * time.Second)
	tol := []corev1.Toleration{runtimeToleration}
	create(t, fixtures.TrainingRuntime(ns, "torch-init", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run},
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: run, DependsOn: []string{"dataset-initializer"}}))
	tj := fixtures.TrainJob(ns, "unlabelled", "torch-init", "")
	tj.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2), ResourcesPerNode: ptr.To(fixtures.WithLimits(fixtures.GPUs(2)))}
	create(t, tj)
	if got := getJob(t, tj).Labels[constants.QueueLabel]; got != lq.Name {
		t.Fatalf("the unlabelled TrainJob was given queue %q, want %q", got, lq.Name)
	}
	queuedOnce := func() error {
		twice, err := fixtures.QueuedOnce(ctx, k8s, ns)
		for _, e := range twice {
			t.Error(e)
		}
		return err
	}
	eventually(t, 4*time.Minute, tj.Name+" complete, queued once at every poll", func() error {
		if err := queuedOnce(); err != nil {
			return err
		}
		if t.Failed() {
			t.FailNow()
		}
		got := getJob(t, tj)
		if !apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobComplete) {
			return fmt.Errorf("not complete: %v", got.Status.Conditions)
		}
		return nil
	})
	if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); wl.Spec.QueueName != kueue.LocalQueueName(lq.Name) {
		t.Errorf("the TrainJob's Workload is on queue %q, want %q", wl.Spec.QueueName, lq.Name)
	}
}

// Where the namespace's LocalQueue named default leads to a MultiKueue
// ClusterQueue, Kueue's JobSet webhook gives every unlabelled JobSet there
// that queue and hands it to MultiKueue (spec.managedBy, immutable). A
// TrainJob queued on another, local, queue runs here: its JobSet is made
// exactly as with no default LocalQueue, no queue name and no managedBy,
// and the job completes.
func TestAChildOfAJobRunningHereIsNeverHandedToMultiKueue(t *testing.T) {
	ns, lq := fixtures.NamespaceWithQueue(t, ctx, k8s, "dispatching-default", 1, 4)
	check := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk-" + ns},
		Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.MultiKueueControllerName, Parameters: &kueue.AdmissionCheckParametersReference{
			APIGroup: kueue.SchemeGroupVersion.Group, Kind: "MultiKueueConfig", Name: "mk-" + ns}}}
	dispatching := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "mk-" + ns}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector:       &metav1.LabelSelector{},
		AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(check.Name)}}},
	}}
	create(t, check, dispatching, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: string(constants.DefaultLocalQueueName)},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(dispatching.Name)}})
	// Kueue's webhook reads its own queue manager: wait until it hands an
	// unlabelled JobSet of this namespace to MultiKueue.
	eventually(t, time.Minute, "Kueue's webhook handing this namespace's JobSets to MultiKueue", func() error {
		js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
			Spec: jobsetapi.JobSetSpec{ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "a", Replicas: 1, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}}}
		if err := k8s.Create(ctx, js, client.DryRunAll); err != nil {
			return err
		}
		if ptr.Deref(js.Spec.ManagedBy, "") != kueue.MultiKueueControllerName {
			return fmt.Errorf("managedBy %q", ptr.Deref(js.Spec.ManagedBy, ""))
		}
		return nil
	})
	create(t, fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(3 * time.Second)}))
	tj := fixtures.TrainJob(ns, "runs-here", "short", lq)
	create(t, tj)
	eventually(t, 2*time.Minute, tj.Name+"'s JobSet made", func() error {
		return k8s.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetapi.JobSet{})
	})
	js := &jobsetapi.JobSet{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), js); err != nil {
		t.Fatal(err)
	}
	if m := ptr.Deref(js.Spec.ManagedBy, ""); m != "" || js.Labels[constants.QueueLabel] != "" {
		t.Fatalf("the JobSet of a job running here was queued and handed over: managedBy %q, queue %q", m, js.Labels[constants.QueueLabel])
	}
	waitComplete(t, tj, 2*time.Minute)
}
