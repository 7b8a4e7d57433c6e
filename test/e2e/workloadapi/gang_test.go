package workloadapi_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

var runtimeToleration = corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}

// gangNamespace is a namespace with count kwok nodes of gpus GPUs each
// and a LocalQueue "lq" whose ClusterQueue has quota GPUs and gang
// schedules every job it admits through the Workload API.
func gangNamespace(t *testing.T, count int, gpus, quota int64) string {
	t.Helper()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "wlapi-"}}
	fixtures.Create(t, ctx, k8s, nsObj)
	ns := nsObj.Name
	addGangNodes(t, ns, 0, count, gpus)
	flavors, cq, lq := fixtures.Queue(ns, ns, gangPool(ns, quota))
	cq.Annotations = map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}
	lq.Name = "lq"
	for _, rf := range flavors {
		fixtures.Create(t, ctx, k8s, rf)
	}
	fixtures.Create(t, ctx, k8s, cq, lq)
	fixtures.WaitActive(t, ctx, k8s, cq.Name, 30*time.Second)
	return ns
}

// gangPool is namespace ns's pool of nodes, with quota GPUs.
func gangPool(ns string, quota int64) fixtures.Pool {
	return fixtures.Pool{Name: "gpu", Labels: map[string]string{"e2e.trainjob-kueue.dev/pool": ns},
		Taints: []corev1.Toleration{{Key: "e2e.trainjob-kueue.dev/pool", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}, GPUs: quota}
}

// addGangNodes adds count kwok nodes of gpus GPUs to namespace ns's pool,
// numbered from first.
func addGangNodes(t *testing.T, ns string, first, count int, gpus int64) {
	t.Helper()
	nodes := gangPool(ns, 0)
	nodes.Taints = append([]corev1.Toleration{runtimeToleration}, nodes.Taints...)
	for i := first; i < first+count; i++ {
		if err := localcluster.AddNode(ctx, k8s, fixtures.Node(fmt.Sprintf("%s-%d", ns, i), nodes, gpus)); err != nil {
			t.Fatal(err)
		}
	}
}

// podGroups are the Workload API PodGroups of namespace ns.
func podGroups(t *testing.T, ns string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gang.WorkloadAPIGroupGVK.GroupVersion().WithKind("PodGroupList"))
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// gangsOf: each of tj's PodGroups, by its roles, with its gang's minCount.
func gangsOf(t *testing.T, tj *trainer.TrainJob) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, pg := range podGroups(t, tj.Namespace) {
		if pg.GetLabels()[names.PodGroupJobLabel] != tj.Name || pg.GetDeletionTimestamp() != nil {
			continue
		}
		n, _, _ := unstructured.NestedInt64(pg.Object, "spec", "schedulingPolicy", "gang", "minCount")
		out[pg.GetAnnotations()[names.PodGroupRolesAnnotation]] = n
	}
	return out
}

func podsOf(t *testing.T, tj *trainer.TrainJob, role string) []corev1.Pod {
	t.Helper()
	pods, err := fixtures.PodsOf(ctx, k8s, tj, role)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

func getJob(t *testing.T, tj *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	got := &trainer.TrainJob{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func suspended(tj *trainer.TrainJob) bool { return ptr.Deref(tj.Spec.Suspend, false) }

// scheduledAt is when pod was bound.
func scheduledAt(p *corev1.Pod) (time.Time, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// A torch job with a dataset initializer that its two trainer nodes
// depend on, admitted to a ClusterQueue that gang schedules through the
// Workload API: a PodGroup per wave, each of exactly the pods the
// admission booked for it; every pod in its wave's group; the trainer
// nodes bound together; and no group left once the job ends.
func TestInitializersThenTrainerNodesInKubernetesPodGroups(t *testing.T) {
	ns := gangNamespace(t, 2, 4, 8)
	tol := []corev1.Toleration{runtimeToleration}
	fixtures.Create(t, ctx, k8s, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(2),
		fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: fixtures.RunFor(5 * time.Second)},
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Tolerations: tol, Annotations: fixtures.RunFor(8 * time.Second), DependsOn: []string{"dataset-initializer"}}))
	tj := fixtures.TrainJob(ns, "llm", "torch", "lq")
	fixtures.Create(t, ctx, k8s, tj)

	groups := map[string]string{} // role -> group
	poll.Eventually(t, 2*time.Minute, "the job's PodGroups", func() error {
		got := gangsOf(t, tj)
		if want := map[string]int64{"dataset-initializer": 1, "node": 2}; !mapsEqual(got, want) {
			return fmt.Errorf("PodGroups (roles: minCount) %v, want %v", got, want)
		}
		for _, pg := range podGroups(t, ns) {
			groups[pg.GetAnnotations()[names.PodGroupRolesAnnotation]] = pg.GetName()
		}
		return nil
	})
	fixtures.WaitComplete(t, ctx, k8s, tj, 3*time.Minute)

	var starts []time.Time
	for _, role := range []string{"dataset-initializer", "node"} {
		for _, pod := range podsOf(t, tj, role) {
			got := ""
			if sg := pod.Spec.SchedulingGroup; sg != nil {
				got = ptr.Deref(sg.PodGroupName, "")
			}
			if got == "" || got != groups[role] {
				t.Errorf("pod %s (%s) in PodGroup %q, want its wave's %q", pod.Name, role, got, groups[role])
			}
			if at, ok := scheduledAt(&pod); role == "node" && ok {
				starts = append(starts, at)
			}
		}
	}
	if len(starts) != 2 {
		t.Fatalf("want 2 scheduled trainer pods, got %d", len(starts))
	}
	slices.SortFunc(starts, func(x, y time.Time) int { return x.Compare(y) })
	if gap := starts[1].Sub(starts[0]); gap > 2*time.Second {
		t.Errorf("trainer pods were bound %s apart: not as one gang", gap)
	}
	poll.Eventually(t, time.Minute, "no PodGroup left once the job ended", func() error {
		if left := podGroups(t, ns); len(left) > 0 {
			return fmt.Errorf("%d PodGroups left, the first %s (deleting: %v, finalizers %v)", len(left), left[0].GetName(), left[0].GetDeletionTimestamp() != nil, left[0].GetFinalizers())
		}
		return nil
	})
}

// Quota for two 4-node × 8-GPU jobs, nodes for one: Kueue admits both,
// and kube-scheduler's gang starts one whole and keeps every pod of the
// other off the nodes until the first finished.
func TestOverSubscribedGangsStartWholeOneAtATimeUnderTheWorkloadAPI(t *testing.T) {
	ns := gangNamespace(t, 4, 8, 64)
	fixtures.Create(t, ctx, k8s, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(4),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(8 * time.Second)}))
	a, b := fixtures.TrainJob(ns, "a", "torch", "lq"), fixtures.TrainJob(ns, "b", "torch", "lq")
	fixtures.Create(t, ctx, k8s, a, b)
	bothAdmitted := false
	poll.Eventually(t, 4*time.Minute, "both jobs complete", func() error {
		bound := fixtures.BoundPods(t, ctx, k8s, ns)
		if bound["a"] > 0 && bound["b"] > 0 {
			t.Fatalf("both jobs hold nodes at once (a: %d pods, b: %d pods): neither can run whole", bound["a"], bound["b"])
		}
		for _, tj := range []*trainer.TrainJob{a, b} {
			if !bothAdmitted {
				wa, _ := fixtures.WorkloadOf(ctx, k8s, a)
				wb, _ := fixtures.WorkloadOf(ctx, k8s, b)
				bothAdmitted = wa != nil && wb != nil && workload.IsAdmitted(wa) && workload.IsAdmitted(wb)
			}
			got := getJob(t, tj)
			if apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobFailed) {
				t.Fatalf("%s failed: %v", tj.Name, got.Status.Conditions)
			}
			if !apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobComplete) {
				return fmt.Errorf("%s not complete; pods on nodes: %v", tj.Name, bound)
			}
		}
		return nil
	})
	if !bothAdmitted {
		t.Errorf("Kueue never admitted both jobs at once: the nodes were never over-subscribed")
	}
}

// kueue#10487's class under the Workload API: a 4-node job runs whole, two
// of its trainer pods succeed, a high-priority job preempts it. Its groups
// go with its pods; re-admitted, it gets a fresh group of the two pods
// that will come, not four, and runs them.
func TestAGangReadmittedAfterSomeIndexesSucceededGetsAFreshGroupOfTheRest(t *testing.T) {
	ns := gangNamespace(t, 4, 8, 32)
	for name, value := range map[string]int32{ns + "-low": 10, ns + "-high": 1000} {
		fixtures.Create(t, ctx, k8s, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	tol := []corev1.Toleration{runtimeToleration}
	fixtures.Create(t, ctx, k8s,
		fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(4),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: tol, Priority: ns + "-low", Annotations: fixtures.RunFor(time.Hour)}),
		fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(4),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: tol, Priority: ns + "-high", Annotations: fixtures.RunFor(5 * time.Second)}))
	low := fixtures.TrainJob(ns, "low", "long", "lq")
	fixtures.Create(t, ctx, k8s, low)
	running := func() []string {
		var indexes []string
		for _, pod := range podsOf(t, low, "node") {
			if pod.Status.Phase == corev1.PodRunning {
				indexes = append(indexes, pod.Labels[batchv1.JobCompletionIndexAnnotation])
			}
		}
		slices.Sort(indexes)
		return indexes
	}
	poll.Eventually(t, 2*time.Minute, "the low job runs whole", func() error {
		if n := len(running()); n != 4 {
			return fmt.Errorf("%d of 4 pods running", n)
		}
		return nil
	})
	first := groupNames(t, low)
	for _, pod := range podsOf(t, low, "node") {
		if i := pod.Labels[batchv1.JobCompletionIndexAnnotation]; i == "0" || i == "1" {
			succeed(t, &pod)
		}
	}
	poll.Eventually(t, time.Minute, `completedIndexes "0,1"`, func() error {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{jobsetapi.JobSetNameKey: low.Name}); err != nil {
			return err
		}
		for _, j := range jobs.Items {
			if j.Status.CompletedIndexes == "0,1" {
				return nil
			}
		}
		return fmt.Errorf("no Job of %s has completed indexes 0,1", low.Name)
	})
	high := fixtures.TrainJob(ns, "high", "short", "lq")
	fixtures.Create(t, ctx, k8s, high)
	fixtures.WaitComplete(t, ctx, k8s, high, 3*time.Minute)

	poll.Eventually(t, 2*time.Minute, "the low job's remaining pods run", func() error {
		if suspended(getJob(t, low)) {
			return fmt.Errorf("not re-admitted yet")
		}
		if got := running(); !slices.Equal(got, []string{"2", "3"}) {
			return fmt.Errorf("running indexes %v, want [2 3]; gangs %v", got, gangsOf(t, low))
		}
		return nil
	})
	if got := gangsOf(t, low); !mapsEqual(got, map[string]int64{"node": 2}) {
		t.Errorf("re-admitted gangs (roles: minCount) %v, want node: 2, the pods created again", got)
	}
	for _, name := range groupNames(t, low) {
		if slices.Contains(first, name) {
			t.Errorf("re-admitted in PodGroup %s of the first admission: a group's gang can't change", name)
		}
	}
	for _, pod := range podsOf(t, low, "node") {
		if pod.Status.Phase == corev1.PodRunning {
			succeed(t, &pod)
		}
	}
	fixtures.WaitComplete(t, ctx, k8s, low, 2*time.Minute)
}

// groupNames are tj's PodGroups not being deleted.
func groupNames(t *testing.T, tj *trainer.TrainJob) []string {
	t.Helper()
	var out []string
	for _, pg := range podGroups(t, tj.Namespace) {
		if pg.GetLabels()[names.PodGroupJobLabel] == tj.Name && pg.GetDeletionTimestamp() == nil {
			out = append(out, pg.GetName())
		}
	}
	return out
}

// succeed reports pod Succeeded, as its kubelet would.
func succeed(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	patch := []byte(`{"status":{"phase":"Succeeded","conditions":[{"type":"Ready","status":"False","reason":"PodCompleted"}]}}`)
	if err := k8s.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		t.Fatalf("pod %s succeeded: %v", pod.Name, err)
	}
}

// A user who may create pods in the namespace forges a pod labelled for a
// running job's PodGroup and for its JobSet: not proven the job's by its
// owners' UIDs, it joins no group (and Kueue's rules for it stand); one
// that claims the job's real Job by name with another UID likewise.
func TestAForgedPodJoinsNoJobsPodGroup(t *testing.T) {
	ns := gangNamespace(t, 1, 8, 8)
	fixtures.Create(t, ctx, k8s, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(time.Hour)}))
	tj := fixtures.TrainJob(ns, "llm", "torch", "lq")
	fixtures.Create(t, ctx, k8s, tj)
	var group string
	poll.Eventually(t, 2*time.Minute, "the job runs in its group", func() error {
		pods := podsOf(t, tj, "node")
		if len(pods) != 1 || pods[0].Spec.SchedulingGroup == nil {
			return fmt.Errorf("%d pods, none in a group yet", len(pods))
		}
		group = ptr.Deref(pods[0].Spec.SchedulingGroup.PodGroupName, "")
		return nil
	})
	job := &batchv1.Job{}
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{jobsetapi.JobSetNameKey: tj.Name}); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("the job's Job: %v (%d)", err, len(jobs.Items))
	}
	*job = jobs.Items[0]
	for name, owners := range map[string][]metav1.OwnerReference{
		"labels only":                 nil,
		"the Job's name, another UID": {{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: "forged", Controller: ptr.To(true)}},
	} {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "forged-", Namespace: ns, OwnerReferences: owners,
				Labels: map[string]string{jobsetapi.JobSetNameKey: tj.Name, names.PodGroupLabel: group}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
			err := k8s.Create(ctx, pod)
			if err != nil {
				if !strings.Contains(err.Error(), names.PodGroupLabel) {
					t.Fatalf("refused, but not for the label: %v", err)
				}
				return
			}
			if pod.Spec.SchedulingGroup != nil {
				t.Errorf("a forged pod joined PodGroup %v", *pod.Spec.SchedulingGroup.PodGroupName)
			}
		})
	}
}

func mapsEqual(a, b map[string]int64) bool { return maps.Equal(a, b) }
