package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// overrideField is the override field of the Trainer under test.
func overrideField() string {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "trainjobs.trainer.kubeflow.org"}, crd); err != nil {
		panic(err)
	}
	s, err := discovery.DetectShape(crd)
	if err != nil {
		panic(err)
	}
	return s.Name()
}

// gangQueue is a queue for pool p whose ClusterQueue its batch admin opted
// in to gang scheduling.
func gangQueue(t *testing.T, ns string, p fixtures.Pool) *kueue.LocalQueue {
	t.Helper()
	flavors, cq, lq := fixtures.Queue(ns, ns, p)
	cq.Annotations = map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling}
	for _, rf := range flavors {
		create(t, rf)
	}
	create(t, cq, lq)
	return lq
}

func coscheduling(timeoutSeconds int32) *trainer.PodGroupPolicy {
	return &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
		Coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To(timeoutSeconds)},
	}}
}

// Quota for two 4-node × 8-GPU jobs, nodes for one: Kueue admits both, and
// gang scheduling must start one whole and keep every pod of the other off
// the nodes until the first finished.
func TestOverSubscribedGangsStartWholeOneAtATime(t *testing.T) {
	onSchedulerPlugins(t)
	ns := namespace(t)
	p := gpuPool(ns, "gang", 64)
	nodesOf(t, ns, p, 4, 8)
	// The batch admin opts the ClusterQueue in; the runtime has no
	// podGroupPolicy of its own.
	lq := gangQueue(t, ns, p)
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(4),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(8 * time.Second)}))
	a, b := fixtures.TrainJob(ns, "a", "torch", lq.Name), fixtures.TrainJob(ns, "b", "torch", lq.Name)
	create(t, a, b)
	if overrideField() == "spec.podSpecOverrides" {
		// Trainer v2.0 can't carry the PodGroup label: refused, not started.
		for _, tj := range []*trainer.TrainJob{a, b} {
			eventually(t, time.Minute, tj.Name+" refused", func() error {
				return fixtures.EventOn(ctx, k8s, tj, gang.ReasonGangUnsupported, "Trainer v2.0")
			})
			if !suspended(getJob(t, tj)) || len(podsOf(t, tj, "node")) > 0 {
				t.Errorf("%s started although its gang can't be carried out", tj.Name)
			}
		}
		return
	}

	bothAdmitted := false
	most := map[string]int{}
	first := ""
	// Well within kube-scheduler's 5-minute flush of unschedulable pods:
	// the second gang must be retried when the first is done.
	eventually(t, 2*time.Minute, "both jobs complete", func() error {
		bound := fixtures.BoundPods(t, ctx, k8s, ns)
		if bound["a"] > 0 && bound["b"] > 0 {
			t.Fatalf("both jobs hold nodes at once (a: %d pods, b: %d pods): neither can run whole", bound["a"], bound["b"])
		}
		for job, n := range bound {
			most[job] = max(most[job], n)
			if first == "" && n > 0 {
				first = job
			}
		}
		if !bothAdmitted {
			bothAdmitted = workload.IsAdmitted(fixtures.WaitWorkload(t, ctx, k8s, a)) && workload.IsAdmitted(fixtures.WaitWorkload(t, ctx, k8s, b))
		}
		for _, tj := range []*trainer.TrainJob{a, b} {
			got := getJob(t, tj)
			if condition(got, trainer.TrainJobFailed) {
				t.Fatalf("%s failed: %v", tj.Name, got.Status.Conditions)
			}
			if !condition(got, trainer.TrainJobComplete) {
				return fmt.Errorf("%s not complete; pods on nodes: %v", tj.Name, bound)
			}
		}
		return nil
	})
	if !bothAdmitted {
		t.Errorf("Kueue never admitted both jobs at once: the nodes were never over-subscribed")
	}
	for _, job := range []string{"a", "b"} {
		if most[job] != 4 {
			t.Errorf("job %s had at most %d of its 4 pods on nodes at once", job, most[job])
		}
	}
	second := map[string]string{"a": "b", "b": "a"}[first]
	pg := &schedv1alpha1.PodGroup{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: second}, pg); err != nil {
		t.Fatal(err)
	}
	if pg.Annotations[names.GangRetriedAtAnnotation] == "" {
		t.Errorf("the gang of %s, which waited for %s, was never retried", second, first)
	}
}

// A runtime whose podGroupPolicy makes Trainer create a PodGroup, with a
// dataset initializer the trainer nodes depend on. Trainer alone sizes the
// group for all three pods, and the initializer, the only pod that exists,
// waits for siblings for ever; queued through trainjob-kueue the job runs
// to completion, the trainer nodes starting together.
func TestInitializersThenTrainerNodesUnderTrainersCoscheduling(t *testing.T) {
	onSchedulerPlugins(t)
	ns := namespace(t)
	p := gpuPool(ns, "cosched", 8)
	nodesOf(t, ns, p, 2, 4)
	lq := queue(t, ns, ns, p)
	runtime := func(name string, tol ...corev1.Toleration) *trainer.TrainingRuntime {
		rt := fixtures.TrainingRuntime(ns, name, fixtures.TorchPolicy(2),
			fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Tolerations: tol, Annotations: fixtures.RunFor(5 * time.Second)},
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Tolerations: tol, Annotations: fixtures.RunFor(5 * time.Second), DependsOn: []string{"dataset-initializer"}})
		rt.Spec.PodGroupPolicy = coscheduling(60)
		return rt
	}
	// Outside Kueue the pods get no flavor: the runtime itself tolerates
	// the pool, so only the gang can hold them back.
	create(t, runtime("queued", runtimeToleration), runtime("alone", append([]corev1.Toleration{runtimeToleration}, p.Taints...)...))
	queued := fixtures.TrainJob(ns, "queued", "queued", lq)
	alone := fixtures.TrainJob(ns, "alone", "alone", "")
	create(t, queued, alone)

	waitComplete(t, queued, 3*time.Minute)
	var starts []time.Time
	for _, pod := range podsOf(t, queued, "node") {
		if pod.Spec.NodeName == "" {
			t.Errorf("trainer pod %s never ran", pod.Name)
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
				starts = append(starts, c.LastTransitionTime.Time)
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
	eventually(t, 30*time.Second, "GangResized events", func() error {
		return fixtures.EventOn(ctx, k8s, queued, gang.ReasonGangResized, "for dataset-initializer")
	})

	// Meanwhile, Trainer alone: its group waits for three pods while one
	// exists.
	pg := &schedv1alpha1.PodGroup{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alone"}, pg); err != nil {
		t.Fatal(err)
	}
	if pg.Spec.MinMember != 3 {
		t.Errorf("Trainer's own PodGroup minMember %d, want 3 (initializer + 2 trainer nodes)", pg.Spec.MinMember)
	}
	pods := podsOf(t, alone, "dataset-initializer")
	if len(pods) != 1 {
		t.Fatalf("want the initializer pod of the unqueued job, got %d pods", len(pods))
	}
	if pods[0].Spec.NodeName != "" {
		t.Fatalf("the unqueued job's initializer was bound to %s: Trainer's PodGroup no longer deadlocks, revisit the design notes", pods[0].Spec.NodeName)
	}
	if msg := scheduledMessage(&pods[0]); !strings.Contains(msg, "cannot find enough sibling pods") {
		t.Errorf("the initializer waits for another reason: %q", msg)
	}
	if err := k8s.Delete(ctx, alone); err != nil {
		t.Error(err)
	}
}

func scheduledMessage(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Message
		}
	}
	return ""
}

// Nodes in 2 blocks × 2 racks × 2 hosts of 4 GPUs, a Kueue Topology and a
// flavor that uses it. A trainer role that requires a rack lands in one
// rack; one that only prefers a rack but needs two racks' worth of GPUs
// spreads over two racks of one block, not further.
func TestTopologyAwarePlacementOfTrainerNodes(t *testing.T) {
	ns := namespace(t)
	blockLabel, rackLabel := "e2e.trainjob-kueue.dev/block", "e2e.trainjob-kueue.dev/rack"
	p := gpuPool(ns, "tas", 32)
	tainted := p
	tainted.Taints = append([]corev1.Toleration{runtimeToleration}, p.Taints...)
	for b := range 2 {
		for r := range 2 {
			for h := range 2 {
				n := fixtures.Node(fmt.Sprintf("%s-tas-b%d-r%d-h%d", ns, b, r, h), tainted, 4)
				n.Labels[blockLabel] = fmt.Sprintf("b%d", b)
				n.Labels[rackLabel] = fmt.Sprintf("b%d-r%d", b, r)
				if err := localcluster.AddNode(ctx, k8s, n); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	topology := &kueue.Topology{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: kueue.TopologySpec{Levels: []kueue.TopologyLevel{
			{NodeLabel: blockLabel}, {NodeLabel: rackLabel}, {NodeLabel: corev1.LabelHostname},
		}},
	}
	create(t, topology)
	flavors, cq, lq := fixtures.Queue(ns, ns, p)
	for _, rf := range flavors {
		rf.Spec.TopologyName = ptr.To(kueue.TopologyReference(topology.Name))
		create(t, rf)
	}
	create(t, cq, lq)
	runtime := func(name, annotation string, nodes int32) *trainer.TrainingRuntime {
		annotations := fixtures.RunFor(10 * time.Second)
		annotations[annotation] = rackLabel
		return fixtures.TrainingRuntime(ns, name, fixtures.TorchPolicy(nodes),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: annotations})
	}
	create(t, runtime("required", kueue.PodSetRequiredTopologyAnnotation, 2), runtime("preferred", kueue.PodSetPreferredTopologyAnnotation, 4))
	required, preferred := fixtures.TrainJob(ns, "required", "required", lq.Name), fixtures.TrainJob(ns, "preferred", "preferred", lq.Name)
	create(t, required, preferred)
	if overrideField() == "spec.podSpecOverrides" {
		// Trainer v2.0 can't carry the pod labels Kueue's ungater finds
		// pods by: refused, never started, the quota given back.
		for _, tj := range []*trainer.TrainJob{required, preferred} {
			eventually(t, time.Minute, tj.Name+" refused", func() error {
				return fixtures.EventOn(ctx, k8s, tj, integration.ReasonTopologyUnsupported, "Trainer v2.0")
			})
			eventually(t, time.Minute, tj.Name+"'s quota given back", func() error {
				if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
					return fmt.Errorf("Workload %s not finished: %v", wl.Name, wl.Status.Conditions)
				}
				return nil
			})
			if !suspended(getJob(t, tj)) || len(podsOf(t, tj, "node")) > 0 {
				t.Errorf("%s started although its placement can't be carried out", tj.Name)
			}
		}
		return
	}
	waitComplete(t, required, 3*time.Minute)
	waitComplete(t, preferred, 3*time.Minute)

	placement := func(tj *trainer.TrainJob) (racks, blocks map[string]bool) {
		racks, blocks = map[string]bool{}, map[string]bool{}
		for _, pod := range podsOf(t, tj, "node") {
			if pod.Labels["kueue.x-k8s.io/podset"] != "node" || pod.Annotations["kueue.x-k8s.io/workload"] == "" {
				t.Errorf("%s: pod %s lacks the podset label or workload annotation Kueue's ungater finds it by", tj.Name, pod.Name)
			}
			node := &corev1.Node{}
			if err := k8s.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
				t.Fatalf("%s: pod %s on no node: %v", tj.Name, pod.Name, err)
			}
			racks[node.Labels[rackLabel]] = true
			blocks[node.Labels[blockLabel]] = true
		}
		return racks, blocks
	}
	if racks, _ := placement(required); len(racks) != 1 {
		t.Errorf("the job requiring a rack ran in racks %v", racks)
	}
	if racks, blocks := placement(preferred); len(racks) != 2 || len(blocks) != 1 {
		t.Errorf("the job preferring a rack, needing two, ran in racks %v of blocks %v", racks, blocks)
	}
}

// On a cluster whose API server does not serve Kubernetes' PodGroups (this
// suite's Kubernetes v1.34): a batch admin's ClusterQueue asking for gang
// mode workload-api is refused at its write, naming the annotation and
// what the cluster lacks, and so is a job that opts in itself: no job is
// admitted under a gang its cluster cannot keep.
func TestWorkloadAPIGangsWhereTheAPIIsNotServedAreRefused(t *testing.T) {
	onSchedulerPlugins(t)
	ns := namespace(t)
	p := gpuPool(ns, "nowlapi", 8)
	nodesOf(t, ns, p, 1, 8)
	flavors, cq, lq := fixtures.Queue(ns, ns, p)
	cq.Annotations = map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}
	for _, rf := range flavors {
		create(t, rf)
	}
	err := k8s.Create(ctx, cq)
	if err == nil || !strings.Contains(err.Error(), names.GangSchedulingAnnotation) || !strings.Contains(err.Error(), "scheduling.k8s.io/v1beta1") {
		t.Fatalf("a ClusterQueue asking for workload-api gangs on a cluster without the API: %v, want a refusal naming the annotation and the API", err)
	}
	cq.Annotations = nil
	create(t, cq, lq)
	fixtures.WaitActive(t, ctx, k8s, cq.Name, 30*time.Second)
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(time.Hour)}))
	tj := fixtures.TrainJob(ns, "optin", "torch", lq.Name)
	tj.Annotations = map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}
	err = k8s.Create(ctx, tj)
	if err == nil || !strings.Contains(err.Error(), names.GangSchedulingAnnotation) || !strings.Contains(err.Error(), "does not serve") {
		t.Fatalf("a TrainJob asking for workload-api gangs on a cluster without the API: %v, want a refusal naming the annotation and the API", err)
	}
}
