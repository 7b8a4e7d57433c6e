package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueconstants "sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// A user who may create pods, Jobs and JobSets in a queued namespace tries
// every way past the queue that names alone would open: a bare pod
// labelled as a running TrainJob's JobSet, pods, Jobs and JobSets that
// claim the TrainJob's own children or the TrainJob itself as their
// controller with other UIDs, and owners of another kind with the real
// UID. Every crafted object is refused at create or stays queued by Kueue
// (gated, or suspended with its queue name), judged as admission leaves it (a server-side dry
// run: the garbage collector removes a forged child moments later); the
// bare pod gets a Workload of its own. The TrainJob's own children run
// with none.
func TestNobodyWalksAroundTheQueue(t *testing.T) {
	ns := fixtures.NamespaceWithDefaultQueue(t, ctx, k8s, "walls")
	tj := fixtures.TrainJob(ns, "llama-finetune", "long", string(constants.DefaultLocalQueueName))
	create(t, fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(10 * time.Minute)}), tj)

	var jobSet jobsetapi.JobSet
	var job batchv1.Job
	eventually(t, 2*time.Minute, tj.Name+" running, its pods made", func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: tj.Name}, &jobSet); err != nil {
			return err
		}
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{jobsetapi.JobSetNameKey: tj.Name}); err != nil || len(jobs.Items) == 0 {
			return fmt.Errorf("no Job of the JobSet yet (%v)", err)
		}
		job = jobs.Items[0]
		if len(podsOf(t, tj, "node")) == 0 {
			return fmt.Errorf("no pod yet")
		}
		return nil
	})
	if twice, err := fixtures.QueuedOnce(ctx, k8s, ns); err != nil || len(twice) > 0 {
		t.Fatalf("the TrainJob's own children, before anyone forges one: %v %v", twice, err)
	}
	real := getJob(t, tj)

	user := userWhoMayCreateWorkloads(t, ns)
	queueLabel := map[string]string{constants.QueueLabel: string(constants.DefaultLocalQueueName)}
	asJobSets := map[string]string{constants.QueueLabel: string(constants.DefaultLocalQueueName), jobsetapi.JobSetNameKey: tj.Name}
	owner := func(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
	}
	pod := func(name string, owners []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: asJobSets, OwnerReferences: owners},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: fixtures.CPUs("1"), Limits: fixtures.GPUs(4)}}}},
		}
	}
	gated := func(p *corev1.Pod) error {
		if p.Labels[kueueconstants.ManagedByKueueLabelKey] != kueueconstants.ManagedByKueueLabelValue ||
			!slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == "kueue.x-k8s.io/admission" }) {
			return fmt.Errorf("pod %s let past the queue: labels %v, gates %v", p.Name, p.Labels, p.Spec.SchedulingGates)
		}
		return nil
	}

	t.Run("a bare pod labelled as the TrainJob's JobSet's", func(t *testing.T) {
		p := pod("bare", nil)
		if err := user.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, p) })
		if err := gated(p); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "a Workload of the bare pod's own", func() error {
			var wls kueue.WorkloadList
			if err := k8s.List(ctx, &wls, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, wl := range wls.Items {
				if slices.ContainsFunc(wl.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "Pod" && r.UID == p.UID }) {
					return nil
				}
			}
			return fmt.Errorf("none yet")
		})
	})
	for name, p := range map[string]*corev1.Pod{
		"a pod claiming the TrainJob's Job, another UID":                         pod("forged-job", owner("batch/v1", "Job", job.Name, "00000000-0000-0000-0000-000000000001")),
		"a pod controlled by the TrainJob's JobSet (another kind), its real UID": pod("jobsets-own", owner("jobset.x-k8s.io/v1alpha2", "JobSet", jobSet.Name, jobSet.UID)),
		"a pod controlled by the TrainJob itself (another kind), its real UID":   pod("trainjobs-own", owner("trainer.kubeflow.org/v1alpha1", "TrainJob", real.Name, real.UID)),
	} {
		t.Run(name, func(t *testing.T) {
			if err := user.Create(ctx, p, client.DryRunAll); err != nil {
				t.Fatal(err)
			}
			if err := gated(p); err != nil {
				t.Error(err)
			}
		})
	}

	queuedJobSet := func(name string, owners []metav1.OwnerReference) *jobsetapi.JobSet {
		js := jobSet.DeepCopy()
		js.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: name, Labels: queueLabel, OwnerReferences: owners}
		js.Status = jobsetapi.JobSetStatus{}
		js.Spec.Suspend = nil
		js.Spec.ManagedBy = nil
		return js
	}
	for name, js := range map[string]*jobsetapi.JobSet{
		"a JobSet claiming the TrainJob, another UID":      queuedJobSet("claims-llama", owner("trainer.kubeflow.org/v1alpha1", "TrainJob", real.Name, "00000000-0000-0000-0000-000000000002")),
		"a JobSet claiming a TrainJob that does not exist": queuedJobSet("claims-ghost", owner("trainer.kubeflow.org/v1alpha1", "TrainJob", "ghost", "00000000-0000-0000-0000-000000000003")),
	} {
		t.Run(name, func(t *testing.T) {
			if err := user.Create(ctx, js, client.DryRunAll); err != nil {
				// Refused at create is a wall too: Kueue's own JobSet
				// webhook refuses an owner it cannot find, naming it.
				if !strings.Contains(err.Error(), "not found") {
					t.Fatalf("refused for another reason than the missing owner: %v", err)
				}
				return
			}
			if js.Labels[constants.QueueLabel] == "" || !ptr.Deref(js.Spec.Suspend, false) {
				t.Errorf("JobSet %s let past the queue: labels %v, suspend %v", js.Name, js.Labels, ptr.Deref(js.Spec.Suspend, false))
			}
		})
	}

	t.Run("a Job claiming the TrainJob's JobSet, another UID", func(t *testing.T) {
		forged := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "claims-jobset", Labels: queueLabel,
				OwnerReferences: owner("jobset.x-k8s.io/v1alpha2", "JobSet", jobSet.Name, "00000000-0000-0000-0000-000000000004")},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: pod("x", nil).Spec}},
		}
		if err := user.Create(ctx, forged, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if forged.Labels[constants.QueueLabel] == "" || !ptr.Deref(forged.Spec.Suspend, false) {
			t.Errorf("Job %s let past the queue: labels %v, suspend %v", forged.Name, forged.Labels, ptr.Deref(forged.Spec.Suspend, false))
		}
	})

	// The TrainJob's own pods, made before and after the forgeries (one
	// deleted: its Job makes it again), are never Kueue's.
	before := podsOf(t, tj, "node")
	if err := k8s.Delete(ctx, &before[0]); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the TrainJob's pod made again, not queued", func() error {
		for _, p := range podsOf(t, tj, "node") {
			if p.UID == before[0].UID {
				continue
			}
			if p.Labels[kueueconstants.ManagedByKueueLabelKey] != "" || len(p.Spec.SchedulingGates) > 0 {
				t.Fatalf("the TrainJob's own pod %s taken by Kueue: labels %v, gates %v", p.Name, p.Labels, p.Spec.SchedulingGates)
			}
			return nil
		}
		return fmt.Errorf("not yet")
	})
	if got := getJob(t, tj); suspended(got) || condition(got, trainer.TrainJobFailed) {
		t.Errorf("the TrainJob stopped: suspend %v, conditions %v", suspended(got), got.Status.Conditions)
	}
}

// userWhoMayCreateWorkloads is a client acting as a user of namespace ns
// who may create and read pods, Jobs and JobSets there, and nothing else:
// what a team member with an edit role can do.
func userWhoMayCreateWorkloads(t *testing.T, ns string) client.Client {
	t.Helper()
	name := "user-" + ns
	create(t,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "list"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "get", "list"}},
			{APIGroups: []string{"jobset.x-k8s.io"}, Resources: []string{"jobsets"}, Verbs: []string{"create", "get", "list"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}}},
	)
	// The API server's authorizer learns of the binding through its own
	// informers: wait until it allows what the user will do (a create
	// right after the binding was refused as forbidden, under load).
	for _, r := range []authorizationv1.ResourceAttributes{
		{Namespace: ns, Verb: "create", Resource: "pods"},
		{Namespace: ns, Verb: "create", Group: "batch", Resource: "jobs"},
		{Namespace: ns, Verb: "create", Group: "jobset.x-k8s.io", Resource: "jobsets"},
	} {
		eventually(t, 30*time.Second, name+" allowed to create "+r.Resource, func() error {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: name, ResourceAttributes: &r}}
			if err := k8s.Create(ctx, sar); err != nil {
				return err
			}
			if !sar.Status.Allowed {
				return fmt.Errorf("not allowed yet: %s", sar.Status.Reason)
			}
			return nil
		})
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate.UserName = name
	c, err := client.New(cfg, client.Options{Scheme: fixtures.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
