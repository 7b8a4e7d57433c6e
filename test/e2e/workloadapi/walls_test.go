package workloadapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// A co-tenant who may create pods forges members of a waiting job's gang:
// a bare pod naming its PodGroup in spec.schedulingGroup, and a pod of a
// TrainJob of their own (its owners real, by UID) naming it. Room is
// short (one 8-GPU node for a 2 × 8-GPU job): with a forged member the
// gang's quorum would be met by one of the victim's pods and the forger's,
// and the victim would run some but not all of its pods. Both are refused
// at create, naming the field; the victim has no pod bound while room is
// short, and runs whole once a second node comes.
func TestAForgedMemberIsRefusedAndTheGangNeverHalfStarts(t *testing.T) {
	ns := gangNamespace(t, 1, 8, 16)
	tol := []corev1.Toleration{runtimeToleration}
	fixtures.Create(t, ctx, k8s,
		fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(2),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: tol, Annotations: fixtures.RunFor(5 * time.Second)}),
		fixtures.TrainingRuntime(ns, "small", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("10m"), Annotations: fixtures.RunFor(time.Hour)}))
	victim := fixtures.TrainJob(ns, "victim", "torch", "lq")
	fixtures.Create(t, ctx, k8s, victim)
	var group string
	poll.Eventually(t, 2*time.Minute, "the victim's two pods wait in their group", func() error {
		pods := podsOf(t, victim, "node")
		if len(pods) != 2 || pods[0].Spec.SchedulingGroup == nil {
			return fmt.Errorf("%d pods, in a group: %v", len(pods), len(pods) > 0 && pods[0].Spec.SchedulingGroup != nil)
		}
		group = ptr.Deref(pods[0].Spec.SchedulingGroup.PodGroupName, "")
		return nil
	})
	// The forger's own TrainJob, unqueued: Trainer runs it at once.
	mallory := fixtures.TrainJob(ns, "mallory", "small", "")
	fixtures.Create(t, ctx, k8s, mallory)
	var own batchv1.Job
	poll.Eventually(t, 2*time.Minute, "the forger's own Job", func() error {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{jobsetapi.JobSetNameKey: mallory.Name}); err != nil {
			return err
		}
		if len(jobs.Items) == 0 {
			return fmt.Errorf("no Job yet")
		}
		own = jobs.Items[0]
		return nil
	})
	for name, owners := range map[string][]metav1.OwnerReference{
		"a bare pod":                         nil,
		"a pod of the forger's own TrainJob": {{APIVersion: "batch/v1", Kind: "Job", Name: own.Name, UID: own.UID, Controller: ptr.To(true)}},
	} {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "forged-", Namespace: ns, OwnerReferences: owners,
				Labels: map[string]string{jobsetapi.JobSetNameKey: mallory.Name}},
				Spec: corev1.PodSpec{
					SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To(group)},
					Tolerations:     append(gangPool(ns, 0).Taints, runtimeToleration),
					Containers: []corev1.Container{{Name: "c", Image: "busybox",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}}}
			err := k8s.Create(ctx, pod)
			if err == nil {
				t.Fatalf("pod %s joined the victim's PodGroup %s", pod.Name, group)
			}
			if !strings.Contains(err.Error(), "spec.schedulingGroup.podGroupName") {
				t.Fatalf("refused, but not naming the field: %v", err)
			}
		})
	}
	for range 20 {
		if n := fixtures.BoundPods(t, ctx, k8s, ns)[victim.Name]; n != 0 {
			t.Fatalf("the victim has %d of its 2 pods bound while room is for one: a half-start", n)
		}
		time.Sleep(500 * time.Millisecond)
	}
	addGangNodes(t, ns, 1, 1, 8)
	fixtures.WaitComplete(t, ctx, k8s, victim, 3*time.Minute)
}

// A PodGroup write is ours, never the job's. An admin's
// ValidatingAdmissionPolicy and a webhook both ask every PodGroup of the
// namespace for a label cost-center, and a co-tenant creates a PodGroup
// under the name our start will use (computable: the job's name and a
// token of its Workload's UID and reservation second). Each in turn stops
// the start: the job's Workload is never finished, it stays suspended
// with its quota, and an event names the group and what stopped it. Once
// the policy, the webhook and the squat are gone, the job runs whole in a
// group of its own.
func TestAPodGroupDeniedOrSquattedNeverFinishesTheJob(t *testing.T) {
	ns := gangNamespace(t, 2, 8, 16)
	policy, binding := podGroupPolicy(ns)
	fixtures.Create(t, ctx, k8s, policy, binding)
	hook := denyingPodGroupWebhook(t, ns)
	waitDenied(t, ns, true, "ValidatingAdmissionPolicy")
	waitDenied(t, ns, false, "admission webhook")

	fixtures.Create(t, ctx, k8s, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(2),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(5 * time.Second)}))
	victim := fixtures.TrainJob(ns, "victim2", "torch", "lq")
	fixtures.Create(t, ctx, k8s, victim)
	var name string
	waitsFor := func(what, says string) {
		t.Helper()
		poll.Eventually(t, 2*time.Minute, "the start waits for "+what, func() error {
			wl, err := fixtures.WorkloadOf(ctx, k8s, victim)
			if err != nil {
				return err
			}
			reserved := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
			if reserved == nil || reserved.Status != metav1.ConditionTrue {
				return fmt.Errorf("no quota reserved yet")
			}
			name = gang.WorkloadAPIGroupName(victim.Name, "node", true, gang.AdmissionToken(wl.UID, reserved.LastTransitionTime))
			return fixtures.EventOn(ctx, k8s, victim, gang.ReasonPodGroupNotWritten, ns+"/"+name+" for roles node could not be written: "+says)
		})
		for range 6 {
			wl, err := fixtures.WorkloadOf(ctx, k8s, victim)
			if err != nil {
				t.Fatal(err)
			}
			if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c != nil {
				t.Fatalf("the Workload was finished for a PodGroup write (%s): %s", what, c.Message)
			}
			if !suspended(getJob(t, victim)) {
				t.Fatalf("the job started without its PodGroup (%s)", what)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	waitsFor("the policy", "ValidatingAdmissionPolicy "+ns)
	deleteObject(t, binding)
	waitsFor("the webhook", "admission webhook pod-groups.e2e.trainjob-kueue.dev refused it")

	squatter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squatter"}}
	fixtures.Create(t, ctx, k8s, squatter)
	squat := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"schedulingPolicy": map[string]any{"basic": map[string]any{}}}}}
	squat.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
	squat.SetNamespace(ns)
	squat.SetName(name)
	squat.SetLabels(map[string]string{"cost-center": "squat"})
	squat.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: squatter.Name, UID: squatter.UID, Controller: ptr.To(true)}})
	fixtures.Create(t, ctx, k8s, squat)
	deleteObject(t, hook)
	waitsFor("the squat", "another PodGroup already has its name, and it is not this job's: its controller is ConfigMap squatter")
	kept := &unstructured.Unstructured{}
	kept.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(squat), kept); err != nil || metav1.GetControllerOf(kept).Kind != "ConfigMap" {
		t.Fatalf("the squatter's group was not left as it was: %v, owners %v", err, kept.GetOwnerReferences())
	}

	deleteObject(t, squat)
	fixtures.WaitComplete(t, ctx, k8s, victim, 3*time.Minute)
	for _, pod := range podsOf(t, victim, "node") {
		if got := ptr.Deref(pod.Spec.SchedulingGroup, corev1.PodSchedulingGroup{}).PodGroupName; ptr.Deref(got, "") != name {
			t.Errorf("pod %s in PodGroup %v, want the job's own %s", pod.Name, got, name)
		}
	}
}

// A ClusterQueue asking for a gang scheduler this cluster does not have
// (scheduler-plugins' coscheduling on Kubernetes 1.37 without it) is
// refused when written, naming what to install or the other mode: no job
// it admitted could start.
func TestAGangModeTheClusterLacksIsRefusedAtTheClusterQueue(t *testing.T) {
	_, cq, _ := fixtures.Queue("", "lacks-coscheduling", gangPool("lacks-coscheduling", 8))
	cq.Annotations = map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling}
	err := k8s.Create(ctx, cq)
	if err == nil {
		deleteObject(t, cq)
		t.Fatal("a coscheduling ClusterQueue was accepted on a cluster without scheduler-plugins")
	}
	for _, want := range []string{names.GangSchedulingAnnotation, "podgroups.scheduling.x-k8s.io", gang.WorkloadAPI} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
}

// waitDenied waits until a PodGroup of namespace ns (ours, by our label,
// or not) is refused at create by what refusal names.
func waitDenied(t *testing.T, ns string, ours bool, refusal string) {
	t.Helper()
	poll.Eventually(t, 30*time.Second, refusal+" in effect", func() error {
		pg := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"schedulingPolicy": map[string]any{"basic": map[string]any{}}}}}
		pg.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
		pg.SetNamespace(ns)
		pg.SetGenerateName("probe-")
		if ours {
			pg.SetLabels(map[string]string{names.OwnedLabel: "true"})
		}
		err := k8s.Create(ctx, pg, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), refusal) {
			return fmt.Errorf("a PodGroup create: %v", err)
		}
		return nil
	})
}

func deleteObject(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

// A running job's PodGroup deleted by a user who may edit PodGroups: the
// API server keeps it while the job's pods name it; once they are gone
// (here: deleted, as a node drain would), the job's Job makes them again,
// and they are not refused for ever for want of their group: it is made
// again under its name, and the job runs whole in it.
func TestADeletedGroupOfARunningJobIsMadeAgain(t *testing.T) {
	ns := gangNamespace(t, 1, 8, 8)
	fixtures.Create(t, ctx, k8s, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(2),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(time.Hour)}))
	tj := fixtures.TrainJob(ns, "kept", "torch", "lq")
	fixtures.Create(t, ctx, k8s, tj)
	var group string
	running := func(what string) {
		t.Helper()
		poll.Eventually(t, 3*time.Minute, what, func() error {
			pods := podsOf(t, tj, "node")
			bound := 0
			for _, p := range pods {
				if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Spec.SchedulingGroup != nil {
					group = ptr.Deref(p.Spec.SchedulingGroup.PodGroupName, "")
					bound++
				}
			}
			if bound != 2 {
				return fmt.Errorf("%d of 2 pods bound in a group", bound)
			}
			return nil
		})
	}
	running("the job runs whole in its group")
	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
	pg.SetNamespace(ns)
	pg.SetName(group)
	deleteObject(t, pg)
	for _, p := range podsOf(t, tj, "node") {
		if err := fixtures.ForceDelete(ctx, k8s, &p); err != nil {
			t.Fatal(err)
		}
	}
	poll.Eventually(t, 3*time.Minute, "the group made again", func() error {
		return fixtures.EventOn(ctx, k8s, tj, gang.ReasonPodGroupRemade, group)
	})
	running("the job's new pods run whole in the group made again")
	wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
	if err != nil {
		t.Fatal(err)
	}
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c != nil {
		t.Fatalf("the Workload was finished: %s", c.Message)
	}
}
