package integration_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

type podSetShape struct {
	Name  string
	Count int32
	GPU   int64
	CPU   string
}

func shapeOf(ps []kueue.PodSet) []podSetShape {
	out := make([]podSetShape, len(ps))
	for i := range ps {
		req := ps[i].Template.Spec.Containers[0].Resources.Requests
		g := req[gpu]
		c := req[corev1.ResourceCPU]
		out[i] = podSetShape{Name: string(ps[i].Name), Count: ps[i].Count, GPU: g.Value(), CPU: c.String()}
	}
	return out
}

func TestTorchGPUJobIsQueuedAdmittedAndStartedOnItsFlavor(t *testing.T) {
	ns := newNamespace(t)
	taint := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	lq := queue(t, ns, pool{Name: "a100", Labels: map[string]string{"pool": "a100"}, Taints: []corev1.Toleration{taint}, GPUs: 16})
	runtimeToleration := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}
	create(t, trainingRuntime(ns, "torch", torchPolicy(1),
		role{Name: "node", Ancestor: "trainer", Requests: cpus("1"), Tolerations: []corev1.Toleration{runtimeToleration}}))

	tj := trainJob(ns, "llm", "torch", lq)
	tj.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](3), ResourcesPerNode: ptr.To(withLimits(gpus(4)))}
	create(t, tj)

	if got := getTrainJob(t, tj); !ptr.Deref(got.Spec.Suspend, false) {
		t.Fatalf("the webhook did not suspend a queued TrainJob")
	}
	wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
	if diff := cmp.Diff([]podSetShape{{Name: "node", Count: 3, GPU: 4, CPU: "1"}}, shapeOf(wl.Spec.PodSets)); diff != "" {
		t.Errorf("Workload PodSets (-want +got):\n%s", diff)
	}

	running := waitRunning(t, tj)
	// Kueue's empty runtime patch, as Kueue's own webhook adds it, then ours.
	if n := len(running.Spec.RuntimePatches); n != 2 || running.Spec.RuntimePatches[0].Manager != names.InTreeRuntimePatchManager || running.Spec.RuntimePatches[1].Manager != names.RuntimePatchManager {
		t.Fatalf("want Kueue's empty runtime patch and our injected one, got %d: %+v", n, running.Spec.RuntimePatches)
	}
	js := jobSetOf(t, tj)
	pod := replicatedJob(js, "node").Template.Spec.Template
	if got := pod.Spec.NodeSelector["pool"]; got != "a100" {
		t.Errorf("JobSet pods' nodeSelector pool = %q, want a100", got)
	}
	for _, want := range []corev1.Toleration{runtimeToleration, taint} {
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(have corev1.Toleration) bool { return have.MatchToleration(&want) }) {
			t.Errorf("JobSet pods lack toleration %v; have %v", want, pod.Spec.Tolerations)
		}
	}
	if p := replicatedJob(js, "node").Template.Spec.Parallelism; ptr.Deref(p, 0) != 3 {
		t.Errorf("JobSet node parallelism = %v, want 3", p)
	}
	wl = fixtures.WaitWorkload(t, ctx, k8s, tj)
	if !workload.IsAdmitted(wl) {
		t.Errorf("Workload not admitted")
	}
	eventually(t, "Started event", func() error { return hasEvent(t, tj, "Injected", "") })
}

func TestPodSetsRoundTripThroughTheAPIServer(t *testing.T) {
	ns := newNamespace(t)
	// No quota: the job stays queued, so the Workload is only ever compared,
	// never admitted.
	lq := queue(t, ns, pool{Name: "none", GPUs: 0})
	rt := trainingRuntime(ns, "torch", torchPolicy(2),
		role{Name: "node", Ancestor: "trainer", Requests: gpus(1)})
	// Trainer's torch runtimes name ports without a protocol; the Workload
	// CRD defaults it. Our in-process defaults must match.
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 29400}}
	// As written, before the API server defaulted the runtime: the shape of
	// a template that never went through an API server.
	written := rt.DeepCopy()
	create(t, rt)
	tj := trainJob(ns, "ports", "torch", lq)
	create(t, tj)
	wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
	if p := wl.Spec.PodSets[0].Template.Spec.Containers[0].Ports[0].Protocol; p != corev1.ProtocolTCP {
		t.Fatalf("stored port protocol %q, want TCP", p)
	}

	facts, err := discovery.Discover(ctx, k8s, "", "")
	if err != nil {
		t.Fatal(err)
	}
	shape, defaulter := facts.Shape, facts.Defaulter
	job := getTrainJob(t, tj)
	computed, err := podsets.Build(fixtures.Ours(job), &written.Spec, shape, podsets.Options{Defaulter: defaulter})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(computed, wl.Spec.PodSets) {
		t.Errorf("computed PodSets differ from the stored ones (-computed +stored):\n%s", cmp.Diff(computed, wl.Spec.PodSets))
	}
	undefaulted, err := podsets.Build(fixtures.Ours(job), &written.Spec, shape, podsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if equality.Semantic.DeepEqual(undefaulted, wl.Spec.PodSets) {
		t.Errorf("without defaults the PodSets should differ from the stored ones; this test would not notice a broken defaulter")
	}

	// Reconciles see no mismatch, so the Workload's spec is never rewritten
	// (Kueue's own status updates don't count).
	consistently(t, "Workload unchanged", 2*time.Second, func() error {
		if now := fixtures.WaitWorkload(t, ctx, k8s, tj); now.Generation != wl.Generation || now.UID != wl.UID {
			return fmt.Errorf("Workload rewritten (generation %d -> %d)", wl.Generation, now.Generation)
		}
		return nil
	})
}

func TestSecondFlavorCarriesRuntimeAndFlavorTolerations(t *testing.T) {
	ns := newNamespace(t)
	spotTaint := corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}
	// The first flavor has no GPUs left, so the job goes to the tainted
	// spot pool.
	lq := queue(t, ns,
		pool{Name: "ondemand", Labels: map[string]string{"pool": "ondemand"}, GPUs: 0},
		pool{Name: "spot", Labels: map[string]string{"pool": "spot"}, Taints: []corev1.Toleration{spotTaint}, GPUs: 16})
	runtimeToleration := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}
	create(t, trainingRuntime(ns, "rt", torchPolicy(2),
		role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: cpus("1"), Tolerations: []corev1.Toleration{runtimeToleration}},
		role{Name: "node", Ancestor: "trainer", Requests: gpus(4), Tolerations: []corev1.Toleration{runtimeToleration}, DependsOn: []string{"dataset-initializer"}}))
	tj := trainJob(ns, "job", "rt", lq)
	create(t, tj)
	waitRunning(t, tj)
	js := jobSetOf(t, tj)
	// Flavors are assigned per role: the CPU-only initializer fits the
	// first flavor, the GPU nodes only the spot one.
	for name, want := range map[string]struct {
		pool        string
		tolerations []corev1.Toleration
	}{
		"dataset-initializer": {"ondemand", []corev1.Toleration{runtimeToleration}},
		"node":                {"spot", []corev1.Toleration{runtimeToleration, spotTaint}},
	} {
		pod := replicatedJob(js, name).Template.Spec.Template.Spec
		if pod.NodeSelector["pool"] != want.pool {
			t.Errorf("%s: nodeSelector %v, want pool=%s", name, pod.NodeSelector, want.pool)
		}
		if len(pod.Tolerations) != len(want.tolerations) {
			t.Errorf("%s: tolerations %v, want %v", name, pod.Tolerations, want.tolerations)
		}
		for _, want := range want.tolerations {
			if !slices.ContainsFunc(pod.Tolerations, func(have corev1.Toleration) bool { return have.MatchToleration(&want) && have.Value == want.Value }) {
				t.Errorf("%s: tolerations %v lack %v", name, pod.Tolerations, want)
			}
		}
	}
}

func TestDefaultLocalQueue(t *testing.T) {
	ns := newNamespace(t)
	queue(t, ns, pool{Name: "gpu", GPUs: 8})
	create(t, &kueue.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(ns)},
	})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	// The webhook reads LocalQueues from its cache: give it a moment.
	eventually(t, "default queue seen", func() error {
		tj := trainJob(ns, fmt.Sprintf("job-%d", time.Now().UnixNano()), "rt", "")
		create(t, tj)
		if tj.Labels["kueue.x-k8s.io/queue-name"] != "default" {
			return fmt.Errorf("labels %v", tj.Labels)
		}
		if !ptr.Deref(tj.Spec.Suspend, false) {
			return fmt.Errorf("not suspended")
		}
		waitRunning(t, tj)
		return nil
	})
}

func TestClusterTrainingRuntime(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 16})
	rt := trainingRuntime("", ns+"-cluster-torch", torchPolicy(2), role{Name: "node", Ancestor: "trainer", Requests: gpus(4)})
	create(t, &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: rt.Name}, Spec: rt.Spec})
	tj := trainJob(ns, "job", rt.Name, lq)
	tj.Spec.RuntimeRef.Kind = ptr.To(trainer.ClusterTrainingRuntimeKind)
	create(t, tj)
	wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
	if diff := cmp.Diff([]podSetShape{{Name: "node", Count: 2, GPU: 4, CPU: "1"}}, shapeOf(wl.Spec.PodSets)); diff != "" {
		t.Errorf("Workload PodSets (-want +got):\n%s", diff)
	}
	waitRunning(t, tj)
}

func TestQueueNameIsImmutableWhileRunning(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "job", "rt", lq)
	create(t, tj)
	waitRunning(t, tj)
	// Trainer and we may still be writing the job as it starts: an update
	// from a stale read is a conflict, not the answer this test wants.
	var err error
	eventually(t, "an update that does not conflict", func() error {
		running := getTrainJob(t, tj)
		running.Labels["kueue.x-k8s.io/queue-name"] = "elsewhere"
		if err = k8s.Update(ctx, running); apierrors.IsConflict(err) {
			return err
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "queue-name") {
		t.Fatalf("moving a running TrainJob to another queue: %v", err)
	}
}
