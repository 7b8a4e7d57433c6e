package reliability_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// The bad-input table: hostile or careless input, one row each, with the
// exact answer it gets (a refusal's text, an event's reason and text, or
// Kueue's word on the Workload), that nothing the user wrote was lost, and
// that the job did not start where it must not.

// badInput is one row.
type badInput struct {
	name string
	// only: the override field the row needs ("" for every Trainer).
	only string
	// setup adds what the row needs to its namespace, which holds the
	// runtimes "torch" (pods run 3 s) and "slow" (30 s) and, unless
	// noQueue, the LocalQueue "lq" of the shared ClusterQueue.
	setup   func(t *testing.T, r *row)
	noQueue bool
	// jobNamespace puts the job in another namespace than the row's.
	jobNamespace string
	// job edits the TrainJob "job" (runtime "torch", queue "lq", one entry
	// of the user's) before it is submitted; entries, when set, replaces
	// the user's entries.
	job     func(r *row, tj *trainer.TrainJob)
	entries func(r *row) []any
	// refused: the create must be refused with this text; refusedBy: with
	// one of these, where two webhooks refuse it and the API server answers
	// with whichever answers first.
	refused   string
	refusedBy []string
	// act is what a user or operator does once the job exists; denied: the
	// text its write must be refused with ("": it must succeed).
	act    func(t *testing.T, r *row) error
	denied string
	// deniedBy: the write is refused by both trainjob-kueue's and
	// Trainer's webhook, and the API server answers with whichever answers
	// first: one of these texts.
	deniedBy []string
	// The answer: an event on the job, or Kueue's word on the job's
	// Workload (its QuotaReserved condition); {ns} stands for the row's
	// namespace.
	reason, message string
	pending         string
	// check asserts what else the row promises.
	check func(t *testing.T, r *row)
	// neverStarts: no pod of the job is ever bound, and it stays suspended.
	neverStarts bool
	// fix mends the input, after which the job must complete.
	fix       func(t *testing.T, r *row)
	completes bool
}

// row is a row's namespace and job as it runs.
type row struct {
	// ns is the row's namespace; the job is in jobNs (ns unless the row
	// says otherwise).
	ns, jobNs, name string
	job             *unstructured.Unstructured
	submitted       []map[string]any
	// edited: the user's entries as a row's accepted edit left them.
	edited []map[string]any
}

func (r *row) key() client.ObjectKey { return client.ObjectKey{Namespace: r.jobNs, Name: r.name} }

// badEnv is the ClusterQueue every row's LocalQueue points at: one GPU
// flavor over two nodes, and a decoy node outside it.
type badEnv struct {
	cq      string
	flavors map[string]map[string]string
}

func newBadEnv(t *testing.T) *badEnv {
	t.Helper()
	ns := namespace(t)
	p := gpuPool(ns, "gpu", 16)
	nodesOf(t, ns, p, 2, 8)
	decoy := gpuPool(ns, "decoy", 8)
	decoy.Taints = nil
	nodesOf(t, ns, decoy, 1, 8)
	_, cq := queue(t, ns, p)
	return &badEnv{cq: cq.Name, flavors: map[string]map[string]string{ns + "-gpu": p.Labels}}
}

func badInputs() []badInput {
	gpu := corev1.ResourceName(fixtures.GPU)
	perNode := func(rl corev1.ResourceList) func(*row, *trainer.TrainJob) {
		return func(_ *row, tj *trainer.TrainJob) {
			tj.Spec.Trainer = &trainer.Trainer{ResourcesPerNode: &corev1.ResourceRequirements{Requests: rl}}
		}
	}
	numNodes := func(n int32) func(*row, *trainer.TrainJob) {
		return func(_ *row, tj *trainer.TrainJob) { tj.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To(n)} }
	}
	label := func(k, v string) func(*row, *trainer.TrainJob) {
		return func(_ *row, tj *trainer.TrainJob) { tj.Labels[k] = v }
	}
	annotate := func(k, v string) func(*row, *trainer.TrainJob) {
		return func(_ *row, tj *trainer.TrainJob) { tj.Annotations = map[string]string{k: v} }
	}
	useRuntime := func(name string) func(*row, *trainer.TrainJob) {
		return func(_ *row, tj *trainer.TrainJob) { tj.Spec.RuntimeRef.Name = name }
	}
	// runtime adds a runtime "odd" to the row's namespace, edited.
	runtime := func(edit func(rt *trainer.TrainingRuntime)) func(*testing.T, *row) {
		return func(t *testing.T, r *row) {
			rt := torchRuntime(r.ns, "odd", 1, 3*time.Second)
			edit(rt)
			create(t, rt)
		}
	}
	tmplMeta := func(rt *trainer.TrainingRuntime) *metav1.ObjectMeta {
		return &rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.ObjectMeta
	}
	// nowhere: a LocalQueue whose ClusterQueue does not exist, so the job
	// stays queued.
	nowhere := func(t *testing.T, r *row) {
		create(t, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "nowhere"},
			Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference("missing-" + r.ns)}})
	}
	queuedNowhere := label(fixtures.QueueLabel, "nowhere")
	mergePatch := func(t *testing.T, r *row, patch map[string]any) error {
		data, err := json.Marshal(patch)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.TrainJobKind))
		obj.SetNamespace(r.jobNs)
		obj.SetName(r.name)
		return k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
	}
	forgedEntry := func(role string) any {
		if overrides == "spec.runtimePatches" {
			return map[string]any{"manager": names.RuntimePatchManager, "trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"replicatedJobs": []any{map[string]any{"name": role, "template": map[string]any{"spec": map[string]any{"template": map[string]any{
					"spec": map[string]any{"nodeSelector": map[string]any{"forged": "yes"}}}}}}}}}}}
		}
		return map[string]any{"targetJobs": []any{map[string]any{"name": role}},
			"metadata": map[string]any{"labels": map[string]any{names.OwnedLabel: "true"}}, "spec": map[string]any{"nodeSelector": map[string]any{"forged": "yes"}}}
	}
	inTreeEntry := func(role string) any {
		if overrides == "spec.runtimePatches" {
			return map[string]any{"manager": names.InTreeRuntimePatchManager, "trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"replicatedJobs": []any{map[string]any{"name": role, "template": map[string]any{"spec": map[string]any{"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"mine": "yes"}}}}}}}}}}}
		}
		return map[string]any{"targetJobs": []any{map[string]any{"name": role}},
			"metadata": map[string]any{"labels": map[string]any{names.InTreePodSetLabel: role, "mine": "yes"}}}
	}
	waitRunning := func(t *testing.T, r *row) {
		t.Helper()
		eventually(t, 2*time.Minute, r.name+" running", func() error {
			pods, err := fixtures.PodsOf(ctx, k8s, fixtures.TrainJob(r.ns, r.name, "", ""), "node")
			if err != nil {
				return err
			}
			if len(pods) == 0 || pods[0].Status.Phase != corev1.PodRunning {
				return fmt.Errorf("%d pods", len(pods))
			}
			return nil
		})
	}
	workloadUID := func(t *testing.T, r *row) types.UID {
		t.Helper()
		var uid types.UID
		eventually(t, time.Minute, "Workload of "+r.name, func() error {
			wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
			if len(wls) != 1 {
				return fmt.Errorf("%d Workloads", len(wls))
			}
			uid = wls[0].UID
			return nil
		})
		return uid
	}
	// withNodeSelector is the user's entry for role with a nodeSelector.
	withNodeSelector := func(role, team string, sel map[string]any) any {
		e := userEntry(role, team).(map[string]any)
		if overrides != "spec.runtimePatches" {
			e["spec"] = map[string]any{"nodeSelector": sel}
			return e
		}
		rjs := e["trainingRuntimeSpec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["replicatedJobs"].([]any)
		pod := rjs[0].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)
		pod["spec"] = map[string]any{"nodeSelector": sel}
		return e
	}
	return []badInput{
		// Refused at create: what could never run, said before it queues.
		{name: "negative-cpu", job: perNode(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-2")}),
			refused: "cpu is -2: quantities must not be negative"},
		{name: "half-a-gpu", job: perNode(corev1.ResourceList{gpu: resource.MustParse("0.5")}),
			refused: "nvidia.com/gpu is 500m: extended resources take whole numbers"},
		{name: "negative-memory-limit", job: func(_ *row, tj *trainer.TrainJob) {
			tj.Spec.Trainer = &trainer.Trainer{ResourcesPerNode: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Gi")}}}
		}, refused: "memory is -1Gi: quantities must not be negative"},
		{name: "numnodes-zero", job: numNodes(0), refused: "spec.trainer.numNodes is 0: it must be at least 1"},
		{name: "numnodes-negative", job: numNodes(-3), refused: "spec.trainer.numNodes is -3: it must be at least 1"},
		{name: "pod-count-overflows", setup: runtime(func(rt *trainer.TrainingRuntime) {
			rt.Spec.MLPolicy = nil
			rj := &rt.Spec.Template.Spec.ReplicatedJobs[0]
			rj.Name, rj.Replicas, rj.Template.Labels = "workers", 4, nil
			rj.Template.Spec.Parallelism = ptr.To[int32](math.MaxInt32 / 2)
		}), job: useRuntime("odd"), entries: func(*row) []any { return []any{userEntry("workers", "overflow")} },
			refused: `replicatedJob "workers" would run 4294967292 pods, more than a PodSet can hold`},
		{name: "two-topology-annotations", setup: runtime(func(rt *trainer.TrainingRuntime) {
			tmplMeta(rt).Annotations = map[string]string{kueue.PodSetRequiredTopologyAnnotation: "kubernetes.io/hostname", kueue.PodSetPreferredTopologyAnnotation: "kubernetes.io/hostname"}
		}), job: useRuntime("odd"), refused: "must not contain more than one topology annotation"},
		{name: "slice-larger-than-count", setup: runtime(func(rt *trainer.TrainingRuntime) {
			tmplMeta(rt).Annotations = map[string]string{kueue.PodSetRequiredTopologyAnnotation: "kubernetes.io/hostname",
				kueue.PodSetSliceRequiredTopologyAnnotation: "kubernetes.io/hostname", kueue.PodSetSliceSizeAnnotation: "4"}
		}), job: useRuntime("odd"), refused: "must not be greater than pod set count 1"},
		{name: "unknown-gang-mode", job: annotate(names.GangSchedulingAnnotation, "bogus"),
			refused: `"bogus" is not a gang scheduling mode`},
		{name: "gang-timeout-zero", job: annotate(names.GangScheduleTimeoutAnnotation, "0"),
			refused: `"0" is not a whole number of seconds of at least 1`},
		{name: "forged-marker-at-create", entries: func(r *row) []any { return []any{userEntry("node", r.name), forgedEntry("node")} },
			refused: "are written by trainjob-kueue at admission and removed by it on preemption"},
		{name: "in-tree-marker", entries: func(r *row) []any { return []any{inTreeEntry("node")} },
			refused: "this marks an entry Kueue's in-tree TrainJob integration writes at admission"},
		{name: "sixteen-runtime-patches", only: "spec.runtimePatches", entries: func(r *row) []any {
			var out []any
			for i := range shape.MaxRuntimePatches {
				e := userEntry("node", r.name).(map[string]any)
				e["manager"] = fmt.Sprintf("platform.example.com/p%d", i)
				out = append(out, e)
			}
			return out
		}, refused: "the job has 16 runtime patches of its own and Trainer takes at most 16"},
		{name: "runtime-missing", job: useRuntime("never-made"),
			refused: "specified trainingRuntime must be created before the TrainJob is created"},
		{name: "cluster-runtime-missing", job: func(_ *row, tj *trainer.TrainJob) {
			tj.Spec.RuntimeRef.Kind = ptr.To(trainer.ClusterTrainingRuntimeKind)
			tj.Spec.RuntimeRef.Name = "never-made"
		}, refused: "specified clusterTrainingRuntime must be created before the TrainJob is created"},
		// Kueue's default managedJobsNamespaceSelector leaves its own
		// namespace out (and kube-system, where no webhook of ours or
		// Kueue's runs): a queue name there would hold the job suspended
		// for ever.
		{name: "namespace-kueue-does-not-manage", jobNamespace: "kueue-system", setup: func(t *testing.T, r *row) {
			rt := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: r.ns}, Spec: torchRuntime(r.ns, "x", 1, time.Second).Spec}
			create(t, rt)
			t.Cleanup(func() { _ = k8s.Delete(ctx, rt) })
		}, job: func(r *row, tj *trainer.TrainJob) {
			tj.Spec.RuntimeRef.Kind = ptr.To(trainer.ClusterTrainingRuntimeKind)
			tj.Spec.RuntimeRef.Name = r.ns
		}, refused: "namespace kueue-system is not managed by Kueue"},
		{name: "runtime-kind-unknown", job: func(_ *row, tj *trainer.TrainJob) { tj.Spec.RuntimeRef.Kind = ptr.To("JobSet") },
			refusedBy: []string{"spec.runtimeRef.kind", "unsupported runtime: JobSet.trainer.kubeflow.org"}},
		{name: "multikueue-without-queue", job: func(_ *row, tj *trainer.TrainJob) {
			delete(tj.Labels, fixtures.QueueLabel)
			tj.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
		}, refused: "a TrainJob handed to MultiKueue must be queued"},
		{name: "multikueue-on-a-queue-without-check", job: func(_ *row, tj *trainer.TrainJob) { tj.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName) },
			refused: "which has no MultiKueue admission check"},

		// Accepted, and answered where the user looks.
		{name: "localqueue-pointing-nowhere", setup: nowhere, job: queuedNowhere,
			pending: "ClusterQueue missing-{ns} doesn't exist", neverStarts: true},
		{name: "namespace-without-queues", noQueue: true, pending: "LocalQueue lq doesn't exist", neverStarts: true},
		{name: "more-gpus-than-the-queue-has", job: func(_ *row, tj *trainer.TrainJob) {
			tj.Spec.Trainer = &trainer.Trainer{ResourcesPerNode: ptr.To(fixtures.WithLimits(fixtures.GPUs(64)))}
		},
			pending: "insufficient quota for nvidia.com/gpu", neverStarts: true},
		{name: "numnodes-huge", job: numNodes(1 << 30),
			pending: "insufficient quota", neverStarts: true},
		{name: "runtime-pins-nodes-outside-every-flavor", setup: runtime(func(rt *trainer.TrainingRuntime) {
			rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector = map[string]string{poolLabel: "elsewhere"}
		}), job: useRuntime("odd"), pending: "doesn't match node affinity", neverStarts: true},
		{name: "priority-class-naming-nothing", job: func(r *row, tj *trainer.TrainJob) {
			tj.Labels["kueue.x-k8s.io/priority-class"] = "nope-" + r.ns
		}, reason: integration.ReasonPriorityClassNotFound, message: `label kueue.x-k8s.io/priority-class names WorkloadPriorityClass "nope-{ns}", which does not exist: the job is not queued until it is created`, neverStarts: true,
			fix: func(t *testing.T, r *row) {
				create(t, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "nope-" + r.ns}, Value: 5})
			}, completes: true},
		{name: "prebuilt-workload-naming-nothing", job: label("kueue.x-k8s.io/prebuilt-workload-name", "nowhere"),
			reason: integration.ReasonPrebuiltWorkloadNotFound, message: "names Workload {ns}/nowhere, which does not exist: the job stays suspended until it does", neverStarts: true},
		{name: "queue-changed-while-queued", setup: nowhere, job: queuedNowhere,
			act: func(t *testing.T, r *row) error {
				return mergePatch(t, r, map[string]any{"metadata": map[string]any{"labels": map[string]any{fixtures.QueueLabel: "lq"}}})
			}, completes: true},
		{name: "queue-changed-while-running", job: useRuntime("slow"),
			act: func(t *testing.T, r *row) error {
				waitRunning(t, r)
				return mergePatch(t, r, map[string]any{"metadata": map[string]any{"labels": map[string]any{fixtures.QueueLabel: "other"}}})
			}, denied: "field is immutable", completes: true},
		{name: "user-unsuspends-a-queued-job", setup: nowhere, job: queuedNowhere,
			act: func(t *testing.T, r *row) error {
				workloadUID(t, r)
				return mergePatch(t, r, map[string]any{"spec": map[string]any{"suspend": false}})
			}, denied: "this TrainJob is queued in Kueue", neverStarts: true},
		{name: "user-removes-the-injected-entry", job: useRuntime("slow"),
			act: func(t *testing.T, r *row) error {
				waitRunning(t, r)
				return mergePatch(t, r, map[string]any{"spec": map[string]any{overrideField(): []any{userEntry("node", r.name)}}})
			}, deniedBy: []string{"are written by trainjob-kueue at admission", "can only be modified when the TrainJob is suspended"}, completes: true},
		{name: "user-forges-an-entry-while-queued", setup: nowhere, job: queuedNowhere,
			act: func(t *testing.T, r *row) error {
				return mergePatch(t, r, map[string]any{"spec": map[string]any{overrideField(): []any{userEntry("node", r.name), forgedEntry("node")}}})
			}, denied: "are written by trainjob-kueue at admission", neverStarts: true},
		{name: "workload-deleted-by-hand-while-queued", setup: nowhere, job: queuedNowhere,
			act: func(t *testing.T, r *row) error {
				uid := workloadUID(t, r)
				wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
				if err := k8s.Delete(ctx, &wls[0]); err != nil {
					return err
				}
				eventually(t, time.Minute, "a new Workload", func() error {
					if got := workloadUID(t, r); got == uid {
						return fmt.Errorf("still Workload %s", uid)
					}
					return nil
				})
				return nil
			}, neverStarts: true},
		{name: "workload-deleted-by-hand-while-running", job: useRuntime("slow"),
			act: func(t *testing.T, r *row) error {
				waitRunning(t, r)
				wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
				if len(wls) != 1 {
					return fmt.Errorf("%d Workloads", len(wls))
				}
				return k8s.Delete(ctx, &wls[0])
			}, completes: true},
		{name: "job-deleted-mid-admission", act: func(t *testing.T, r *row) error {
			eventually(t, time.Minute, "quota reserved", func() error {
				wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
				if len(wls) != 1 || !workload.HasQuotaReservation(&wls[0]) {
					return fmt.Errorf("no reservation yet")
				}
				return nil
			})
			return k8s.Delete(ctx, r.job.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground))
		}, check: func(t *testing.T, r *row) {
			eventually(t, time.Minute, "its Workload gone", func() error {
				if wls := workloadsOf(t, r.ns, string(r.job.GetUID())); len(wls) != 0 {
					return fmt.Errorf("%d Workloads left: %v", len(wls), wls[0].Status.Conditions)
				}
				return nil
			})
		}},
		{name: "runtime-deleted-while-queued", setup: nowhere, job: queuedNowhere,
			act: func(t *testing.T, r *row) error {
				workloadUID(t, r)
				if overrides == "spec.podTemplateOverrides" {
					// Trainer v2.1's runtime controller marks the runtime in
					// use a moment after the job arrives: a runtime deleted
					// before that simply goes (the force-deleted row).
					eventually(t, time.Minute, "runtime marked in use", func() error {
						rt := &trainer.TrainingRuntime{}
						if err := k8s.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: "torch"}, rt); err != nil {
							return err
						}
						if len(rt.Finalizers) == 0 {
							return fmt.Errorf("no finalizer yet")
						}
						return nil
					})
				}
				return k8s.Delete(ctx, &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "torch"}})
			}, check: func(t *testing.T, r *row) {
				// Trainer v2.1 keeps a runtime in use (its finalizer): it
				// is deleted once its jobs are. Trainer v2.3 lets it go
				// (the job runs from its snapshot).
				if overrides != "spec.podTemplateOverrides" {
					return
				}
				rt := &trainer.TrainingRuntime{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: "torch"}, rt); err != nil || rt.DeletionTimestamp == nil {
					t.Errorf("runtime in use: %v, deletionTimestamp %v; want it kept, marked for deletion", err, rt.DeletionTimestamp)
				}
			}, neverStarts: true, fix: func(t *testing.T, r *row) {
				// Trainer's webhook refuses any edit of a job whose runtime
				// is gone: it comes back first.
				rt := &trainer.TrainingRuntime{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: "torch"}, rt); apierrors.IsNotFound(err) {
					create(t, torchRuntime(r.ns, "torch", 1, 3*time.Second))
				}
				if err := mergePatch(t, r, map[string]any{"metadata": map[string]any{"labels": map[string]any{fixtures.QueueLabel: "lq"}}}); err != nil {
					t.Fatal(err)
				}
			}, completes: true},
		{name: "runtime-deleted-by-force-then-recreated", setup: nowhere, job: queuedNowhere,
			act: func(t *testing.T, r *row) error {
				workloadUID(t, r)
				// An operator removes Trainer's finalizer.
				return fixtures.ForceDelete(ctx, k8s, &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "torch"}})
			}, neverStarts: true, fix: func(t *testing.T, r *row) {
				create(t, torchRuntime(r.ns, "torch", 1, 3*time.Second))
				if err := mergePatch(t, r, map[string]any{"metadata": map[string]any{"labels": map[string]any{fixtures.QueueLabel: "lq"}}}); err != nil {
					t.Fatal(err)
				}
			}, completes: true,
			// Before v2.3 the job's pods come from the runtime; v2.3 keeps
			// its snapshot, but Trainer's webhook would refuse its start:
			// said missing either way.
			reason: integration.ReasonRuntimeNotFound, message: "TrainingRuntime {ns}/torch named in spec.runtimeRef does not exist"},
		// The same, and then the job is admitted: Trainer's webhook refuses
		// to start a job whose runtime is gone (even on v2.3, which would
		// run it from its snapshot). The job is held, not finished: its
		// Workload deactivated, its quota back. Left so for the hot-loop
		// check.
		{name: "runtime-deleted-by-force-then-admitted", setup: nowhere, job: queuedNowhere,
			act: func(t *testing.T, r *row) error {
				workloadUID(t, r)
				if err := fixtures.ForceDelete(ctx, k8s, &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "torch"}}); err != nil {
					return err
				}
				// The queue the job names comes into being: admitted.
				rf := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "any-" + r.ns}}
				_, cq, _ := fixtures.Queue(r.ns, "missing-"+r.ns, fixtures.Pool{Name: "x", GPUs: 8})
				cq.Spec.ResourceGroups[0].Flavors[0].Name = kueue.ResourceFlavorReference(rf.Name)
				create(t, rf, cq)
				return nil
			}, reason: integration.ReasonRuntimeNotFound, message: "TrainingRuntime {ns}/torch named in spec.runtimeRef does not exist", neverStarts: true,
			check: func(t *testing.T, r *row) {
				eventually(t, 2*time.Minute, "held, its quota given back", func() error {
					wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
					if len(wls) != 1 {
						return fmt.Errorf("%d Workloads", len(wls))
					}
					wl := &wls[0]
					if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
						t.Fatalf("finished: %v", wl.Status.Conditions)
					}
					if ptr.Deref(wl.Spec.Active, true) || wl.Annotations[names.HeldForRuntimeAnnotation] == "" || workload.HasQuotaReservation(wl) {
						return fmt.Errorf("active %v, annotations %v, conditions %v", wl.Spec.Active, wl.Annotations, wl.Status.Conditions)
					}
					if apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted) == nil {
						return fmt.Errorf("never admitted: %v", wl.Status.Conditions)
					}
					return nil
				})
			}},
		// Kueue keeps a reservation through an edit of the pods' nodeSelector
		// (its equivalence check ignores scheduling fields); the start goes
		// by the job as it is then, and refuses a flavor the user's
		// selector now excludes.
		{name: "nodeselector-edited-under-a-reservation", setup: checkedQueue, job: label(fixtures.QueueLabel, "checked"),
			act: func(t *testing.T, r *row) error {
				reservedAtCheck(t, r)
				edited := []any{withNodeSelector("node", r.ns, map[string]any{poolLabel: "elsewhere"})}
				if err := mergePatch(t, r, map[string]any{"spec": map[string]any{overrideField(): edited}}); err != nil {
					return err
				}
				// As the API server holds them (its defaults included).
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.TrainJobKind))
				if err := k8s.Get(ctx, r.key(), got); err != nil {
					return err
				}
				r.edited, _ = entries(got)
				answerCheck(t, r)
				return nil
			}, reason: integration.ReasonNodeSelectorConflict, message: "requires " + poolLabel + "=elsewhere", neverStarts: true,
			check: func(t *testing.T, r *row) {
				eventually(t, time.Minute, "its quota released", func() error {
					wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
					if len(wls) != 1 || !apimeta.IsStatusConditionTrue(wls[0].Status.Conditions, kueue.WorkloadFinished) {
						return fmt.Errorf("%d Workloads, none finished", len(wls))
					}
					cq := &kueue.ClusterQueue{}
					if err := k8s.Get(ctx, client.ObjectKey{Name: "checked-" + r.ns}, cq); err != nil {
						return err
					}
					if cq.Status.ReservingWorkloads != 0 {
						return fmt.Errorf("ClusterQueue %s still reserves quota for %d Workloads", cq.Name, cq.Status.ReservingWorkloads)
					}
					return nil
				})
			}},
		// Every Trainer release built the job's JobSet while it queued
		// (and re-applies it), and JobSet refuses to change its pods: the
		// edit is refused, or the job would hold quota and never start.
		{name: "numnodes-edited-while-queued", setup: nowhere, job: queuedNowhere,
			act: func(t *testing.T, r *row) error {
				workloadUID(t, r)
				return mergePatch(t, r, map[string]any{"spec": map[string]any{"trainer": map[string]any{"numNodes": 2}}})
			}, denied: "JobSet refuses changes to its pods", neverStarts: true},
		{name: "parallelism-zero-runs-one", setup: runtime(func(rt *trainer.TrainingRuntime) {
			rt.Spec.MLPolicy = nil
			rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Parallelism = ptr.To[int32](0)
		}), job: useRuntime("odd"), completes: true, check: func(t *testing.T, r *row) {
			wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
			if len(wls) != 1 || len(wls[0].Spec.PodSets) != 1 || wls[0].Spec.PodSets[0].Count != 1 {
				t.Errorf("Workloads %d, want one booking one pod", len(wls))
			}
		}},
	}
}

// TestBadInput runs the table; each row in a namespace of its own, in
// parallel.
func TestBadInput(t *testing.T) { badInputTable(t) }

// badInputTable runs the table's rows as subtests of t, and returns once
// they are done.
func badInputTable(t *testing.T) {
	env := newBadEnv(t)
	for _, tc := range badInputs() {
		if tc.only != "" && tc.only != overrides {
			t.Logf("row %s needs %s; this Trainer has %s", tc.name, tc.only, overrides)
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runBadInput(t, env, tc)
		})
	}
}

func runBadInput(t *testing.T, env *badEnv, tc badInput) {
	r := &row{ns: namespace(t), name: "job"}
	r.jobNs = r.ns
	if tc.jobNamespace != "" {
		r.jobNs, r.name = tc.jobNamespace, r.ns
	}
	// The row's answer is wrong when a step fails: say which row and what
	// it promised, so a product defect reads as one.
	defer func() {
		if t.Failed() {
			t.Logf("ROW %s FAILED: the answer it promises (refused %q, denied %q, event %s %q, pending %q, never starts %v, completes %v) was not given",
				tc.name, tc.refused, tc.denied, tc.reason, tc.message, tc.pending, tc.neverStarts, tc.completes)
		}
	}()
	if !tc.noQueue {
		create(t, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(env.cq)}})
	}
	create(t, torchRuntime(r.ns, "torch", 1, 3*time.Second), torchRuntime(r.ns, "slow", 1, 30*time.Second))
	if tc.setup != nil {
		tc.setup(t, r)
	}
	tj := fixtures.TrainJob(r.jobNs, r.name, "torch", "lq")
	if tc.job != nil {
		tc.job(r, tj)
	}
	submitted := []any{userEntry("node", r.ns)}
	if tc.entries != nil {
		submitted = tc.entries(r)
	}
	r.job = withEntries(tj, submitted...)
	// A transient refusal is tried again; the answer to the input itself
	// ends the wait.
	var err error
	_ = poll.Until(time.Minute, func() error {
		if err = k8s.Create(ctx, r.job); err != nil && transient(err) {
			return err
		}
		return nil
	})
	if tc.refused != "" || len(tc.refusedBy) > 0 {
		if err == nil || !slices.ContainsFunc(append([]string{tc.refused}, tc.refusedBy...), func(s string) bool { return s != "" && strings.Contains(err.Error(), s) }) {
			t.Fatalf("create: %v; want a refusal containing %q", err, append([]string{tc.refused}, tc.refusedBy...))
		}
		if err := k8s.Get(ctx, r.key(), &trainer.TrainJob{}); !apierrors.IsNotFound(err) {
			t.Errorf("a refused job exists: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	r.submitted, _ = entries(r.job)
	if tc.act != nil {
		err := tc.act(t, r)
		switch {
		case tc.denied == "" && len(tc.deniedBy) == 0 && err != nil:
			t.Fatalf("the row's action: %v", err)
		case tc.denied != "" && (err == nil || !strings.Contains(err.Error(), tc.denied)):
			t.Fatalf("the row's action: %v; want a refusal containing %q", err, tc.denied)
		case len(tc.deniedBy) > 0 && (err == nil || !slices.ContainsFunc(tc.deniedBy, func(s string) bool { return strings.Contains(err.Error(), s) })):
			t.Fatalf("the row's action: %v; want a refusal containing one of %q", err, tc.deniedBy)
		}
	}
	tc.message = strings.ReplaceAll(tc.message, "{ns}", r.ns)
	tc.pending = strings.ReplaceAll(tc.pending, "{ns}", r.ns)
	if tc.reason != "" {
		job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: r.jobNs, Name: r.name}}
		eventually(t, 90*time.Second, "event "+tc.reason, func() error { return eventOn(job, tc.reason, tc.message) })
	}
	if tc.pending != "" {
		eventually(t, 90*time.Second, "Kueue's word on the Workload", func() error {
			wls := workloadsOf(t, r.jobNs, string(r.job.GetUID()))
			if len(wls) != 1 {
				return fmt.Errorf("%d Workloads", len(wls))
			}
			c := apimeta.FindStatusCondition(wls[0].Status.Conditions, kueue.WorkloadQuotaReserved)
			if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, tc.pending) {
				return fmt.Errorf("QuotaReserved %+v; want False with %q", c, tc.pending)
			}
			return nil
		})
	}
	if tc.neverStarts {
		consistently(t, 5*time.Second, "no pod of the job on a node", func() error {
			var pods corev1.PodList
			if err := k8s.List(ctx, &pods, client.InNamespace(r.jobNs)); err != nil {
				return err
			}
			for _, p := range pods.Items {
				if p.Spec.NodeName != "" {
					return fmt.Errorf("pod %s on node %s", p.Name, p.Spec.NodeName)
				}
			}
			return nil
		})
		eventually(t, 30*time.Second, "suspended", func() error {
			got := &trainer.TrainJob{}
			if err := k8s.Get(ctx, r.key(), got); err != nil {
				return err
			}
			if !ptr.Deref(got.Spec.Suspend, false) {
				return fmt.Errorf("unsuspended")
			}
			return nil
		})
		if n := bindings(t, r.jobNs); n != 0 {
			t.Errorf("%d pods of a job that must not start were bound to nodes", n)
		}
	}
	if tc.fix != nil {
		tc.fix(t, r)
	}
	if tc.completes {
		waitComplete(t, r.jobNs, r.name, 4*time.Minute)
		wls := workloadsOf(t, r.jobNs, string(r.job.GetUID()))
		if len(wls) != 1 {
			t.Errorf("%d Workloads, want one", len(wls))
		} else {
			judgePods(t, r.job, &wls[0], env.flavors)
		}
	}
	if tc.check != nil {
		tc.check(t, r)
	}
	userEntriesKept(t, r)
}

// userEntriesKept: every version of the job the API server held carries the
// user's entries exactly as submitted.
func userEntriesKept(t *testing.T, r *row) {
	t.Helper()
	for _, v := range history(t, r.jobNs)[string(r.job.GetUID())] {
		user, _ := entries(v.obj)
		if r.edited != nil && cmp.Equal(r.edited, user) {
			continue
		}
		if d := cmp.Diff(r.submitted, user); d != "" {
			t.Errorf("%s: the user's entries are not as submitted (-submitted +held):\n%s", v, d)
		}
	}
}

// bindings counts the pods of ns bound to a node, from the audit log.
func bindings(t *testing.T, ns string) int {
	t.Helper()
	events, err := localcluster.AuditEvents(cluster.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.Succeeded() && e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "binding" && e.ObjectRef.Namespace == ns
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(events)
}

// checkedQueue gives the row's namespace the LocalQueue "checked", whose
// ClusterQueue holds every admission at an admission check the row
// answers (answerCheck): a job holds a quota reservation without starting
// for as long as the row needs.
func checkedQueue(t *testing.T, r *row) {
	t.Helper()
	ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: r.ns}, Spec: kueue.AdmissionCheckSpec{ControllerName: "reliability.example.com/manual"}}
	create(t, ac)
	t.Cleanup(func() { _ = k8s.Delete(ctx, ac) })
	eventually(t, time.Minute, "admission check active", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(ac), ac); err != nil {
			return err
		}
		apimeta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: kueue.AdmissionCheckActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "answered by the row"})
		return k8s.Status().Update(ctx, ac)
	})
	flavors, cq, lq := fixtures.Queue(r.ns, "checked-"+r.ns, gpuPool(r.ns, "gpu", 8))
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(ac.Name)}}}
	lq.Name = "checked"
	for _, rf := range flavors {
		create(t, rf)
		t.Cleanup(func() { _ = k8s.Delete(ctx, rf) })
	}
	create(t, cq, lq)
	t.Cleanup(func() { _ = k8s.Delete(ctx, cq) })
}

// reservedAtCheck waits until the row's job holds a quota reservation, its
// admission check pending.
func reservedAtCheck(t *testing.T, r *row) {
	t.Helper()
	eventually(t, time.Minute, "quota reserved, check pending", func() error {
		wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
		if len(wls) != 1 || !workload.HasQuotaReservation(&wls[0]) || len(wls[0].Status.AdmissionChecks) == 0 {
			return fmt.Errorf("not reserved at the check yet")
		}
		return nil
	})
}

// answerCheck marks the row's job's admission check ready: Kueue admits.
func answerCheck(t *testing.T, r *row) {
	t.Helper()
	eventually(t, time.Minute, "the check answers", func() error {
		wls := workloadsOf(t, r.ns, string(r.job.GetUID()))
		if len(wls) != 1 || len(wls[0].Status.AdmissionChecks) == 0 {
			return fmt.Errorf("no check on the Workload yet")
		}
		wl := &wls[0]
		wl.Status.AdmissionChecks[0].State = kueue.CheckStateReady
		wl.Status.AdmissionChecks[0].Message = "ready"
		return k8s.Status().Update(ctx, wl)
	})
}
