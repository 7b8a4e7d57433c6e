package integration_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
)

const (
	timeout = 30 * time.Second
	gpu     = corev1.ResourceName("nvidia.com/gpu")
)

// eventually retries f until it succeeds or the timeout passes.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}

// consistently checks f keeps succeeding for a while.
func consistently(t *testing.T, what string, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tj-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		err := k8s.Create(ctx, o)
		// Trainer's webhook reads runtimes from its informer cache, which
		// may not have seen a runtime created a moment ago.
		for tries := 0; err != nil && strings.Contains(err.Error(), "must be created before the TrainJob") && tries < 50; tries++ {
			time.Sleep(100 * time.Millisecond)
			err = k8s.Create(ctx, o)
		}
		if err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// queue sets up a ResourceFlavor per pool, a ClusterQueue with quota in each
// and a LocalQueue named lq in ns. Names are derived from ns so tests don't
// share cluster-scoped objects.
type pool struct {
	name   string
	labels map[string]string
	taints []corev1.Toleration // tolerations the flavor adds
	gpus   int64
}

func queue(t *testing.T, ns string, pools ...pool) string {
	t.Helper()
	lq, err := queueE(ns, pools...)
	if err != nil {
		t.Fatal(err)
	}
	return lq
}

func everything() labels.Selector { return labels.Everything() }

func queueE(ns string, pools ...pool) (string, error) {
	var flavors []kueue.FlavorQuotas
	for _, p := range pools {
		rf := &kueue.ResourceFlavor{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + p.name},
			Spec:       kueue.ResourceFlavorSpec{NodeLabels: p.labels, Tolerations: p.taints},
		}
		if err := k8s.Create(ctx, rf); err != nil {
			return "", err
		}
		flavors = append(flavors, kueue.FlavorQuotas{
			Name: kueue.ResourceFlavorReference(rf.Name),
			Resources: []kueue.ResourceQuota{
				{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("100")},
				{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse("1Ti")},
				{Name: gpu, NominalQuota: *resource.NewQuantity(p.gpus, resource.DecimalSI)},
			},
		})
	}
	cq := &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, gpu},
				Flavors:          flavors,
			}},
			Preemption: &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority},
		},
	}
	if err := k8s.Create(ctx, cq); err != nil {
		return "", err
	}
	lq := &kueue.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"},
		Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq.Name)},
	}
	if err := k8s.Create(ctx, lq); err != nil {
		return "", err
	}
	return lq.Name, poll(func() error {
		var got kueue.ClusterQueue
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cq), &got); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(got.Status.Conditions, kueue.ClusterQueueActive) {
			return fmt.Errorf("ClusterQueue %s not active: %v", cq.Name, got.Status.Conditions)
		}
		return nil
	})
}

// role is one replicatedJob of a test runtime.
type role struct {
	name        string
	ancestor    string
	parallelism int32
	replicas    int32
	requests    corev1.ResourceList
	tolerations []corev1.Toleration
	dependsOn   []string
	priority    string
	annotations map[string]string
}

func replicatedJobs(roles ...role) []jobsetapi.ReplicatedJob {
	out := make([]jobsetapi.ReplicatedJob, 0, len(roles))
	for _, r := range roles {
		container := r.name
		if r.ancestor == "trainer" || r.name == "node" {
			container = "node"
		}
		if r.ancestor == "dataset-initializer" || r.ancestor == "model-initializer" {
			container = r.ancestor
		}
		rj := jobsetapi.ReplicatedJob{
			Name:     r.name,
			Replicas: max(r.replicas, 1),
			Template: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Annotations: r.annotations},
						Spec: corev1.PodSpec{
							RestartPolicy:     corev1.RestartPolicyOnFailure,
							PriorityClassName: r.priority,
							Tolerations:       r.tolerations,
							Containers: []corev1.Container{{
								Name:      container,
								Image:     "registry.example/" + r.name + ":v1",
								Resources: withLimits(r.requests),
							}},
						},
					},
				},
			},
		}
		if r.parallelism > 0 {
			rj.Template.Spec.Parallelism = ptr.To(r.parallelism)
		}
		if r.ancestor != "" {
			rj.Template.Labels = map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": r.ancestor}
		}
		for _, d := range r.dependsOn {
			rj.DependsOn = append(rj.DependsOn, jobsetapi.DependsOn{Name: d, Status: jobsetapi.DependencyComplete})
		}
		out = append(out, rj)
	}
	return out
}

// withLimits sets limits for extended resources, which the API server
// requires to equal their requests.
func withLimits(requests corev1.ResourceList) corev1.ResourceRequirements {
	rr := corev1.ResourceRequirements{Requests: requests}
	for name, q := range requests {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			if rr.Limits == nil {
				rr.Limits = corev1.ResourceList{}
			}
			rr.Limits[name] = q
		}
	}
	return rr
}

func trainingRuntime(ns, name string, policy *trainer.MLPolicy, roles ...role) *trainer.TrainingRuntime {
	return &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: policy,
			Template: trainer.JobSetTemplateSpec{Spec: jobsetapi.JobSetSpec{ReplicatedJobs: replicatedJobs(roles...)}},
		},
	}
}

func torchPolicy(numNodes int32) *trainer.MLPolicy {
	return &trainer.MLPolicy{NumNodes: ptr.To(numNodes), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}}
}

func mpiPolicy(numNodes int32, launcherAsNode bool) *trainer.MLPolicy {
	return &trainer.MLPolicy{NumNodes: ptr.To(numNodes), MLPolicySource: trainer.MLPolicySource{MPI: &trainer.MPIMLPolicySource{
		NumProcPerNode: ptr.To[int32](1), RunLauncherAsNode: ptr.To(launcherAsNode),
		SSHAuthMountPath: ptr.To("/root/.ssh"), MPIImplementation: ptr.To(trainer.MPIImplementationOpenMPI),
	}}}
}

func trainJob(ns, name, runtime, queue string) *trainer.TrainJob {
	tj := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: runtime, APIGroup: ptr.To(trainer.GroupVersion.Group), Kind: ptr.To(trainer.TrainingRuntimeKind)},
		},
	}
	if queue != "" {
		tj.Labels = map[string]string{"kueue.x-k8s.io/queue-name": queue}
	}
	return tj
}

func workloadOf(t *testing.T, tj *trainer.TrainJob) *kueue.Workload {
	t.Helper()
	var wl *kueue.Workload
	eventually(t, "Workload of "+tj.Name, func() error {
		got := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			return err
		}
		w := &kueue.Workload{}
		name := jobframework.GetWorkloadNameForOwnerWithGVK(got.Name, got.UID, integration.GVK)
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: got.Namespace, Name: name}, w); err != nil {
			return err
		}
		wl = w
		return nil
	})
	return wl
}

func getTrainJob(t *testing.T, tj *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	got := &trainer.TrainJob{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func waitRunning(t *testing.T, tj *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	var got *trainer.TrainJob
	eventually(t, "TrainJob "+tj.Name+" unsuspended", func() error {
		got = &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			return err
		}
		if ptr.Deref(got.Spec.Suspend, false) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
	return got
}

func jobSetOf(t *testing.T, tj *trainer.TrainJob) *jobsetapi.JobSet {
	t.Helper()
	js := &jobsetapi.JobSet{}
	eventually(t, "JobSet of "+tj.Name, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), js); err != nil {
			return err
		}
		if ptr.Deref(js.Spec.Suspend, false) {
			return fmt.Errorf("JobSet still suspended")
		}
		return nil
	})
	return js
}

func replicatedJob(js *jobsetapi.JobSet, name string) *jobsetapi.ReplicatedJob {
	for i := range js.Spec.ReplicatedJobs {
		if js.Spec.ReplicatedJobs[i].Name == name {
			return &js.Spec.ReplicatedJobs[i]
		}
	}
	return nil
}

// setJobsStatus plays the Job controller for the child Jobs of a role:
// active pods while running, succeeded once done.
func setJobsStatus(t *testing.T, ns, jobSet, rjName string, active, succeeded int32) {
	t.Helper()
	eventually(t, "status of Jobs "+rjName, func() error {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{
			jobsetapi.JobSetNameKey: jobSet, jobsetapi.ReplicatedJobNameKey: rjName,
		}); err != nil {
			return err
		}
		if len(jobs.Items) == 0 {
			return fmt.Errorf("no Jobs yet")
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			now := metav1.Now()
			j.Status.Active = active
			j.Status.Ready = ptr.To(active)
			j.Status.Succeeded = succeeded
			if j.Status.StartTime == nil {
				j.Status.StartTime = &now
			}
			if succeeded > 0 {
				j.Status.CompletionTime = &now
				j.Status.Conditions = []batchv1.JobCondition{
					{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
				}
			}
			if err := k8s.Status().Update(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
}

func hasEvent(t *testing.T, obj client.Object, reason, contains string) error {
	t.Helper()
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(obj.GetNamespace())); err != nil {
		return err
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == obj.GetName() && e.Reason == reason && strings.Contains(e.Message, contains) {
			return nil
		}
	}
	return fmt.Errorf("no %s event containing %q on %s", reason, contains, obj.GetName())
}

func notFound(err error) bool { return apierrors.IsNotFound(err) }
