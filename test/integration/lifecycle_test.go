package integration_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// userPatch is a user's runtime patch under manager: nodeSelector key=value
// on the pods of job.
func userPatch(manager, job, key, value string) trainer.RuntimePatch {
	return trainer.RuntimePatch{Manager: manager, TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{
		Template: &trainer.JobSetTemplatePatch{Spec: &trainer.JobSetSpecPatch{ReplicatedJobs: []trainer.ReplicatedJobPatch{{
			Name: job,
			Template: &trainer.JobTemplatePatch{Spec: &trainer.JobSpecPatch{Template: &trainer.PodTemplatePatch{
				Spec: &trainer.PodSpecPatch{NodeSelector: map[string]string{key: value}},
			}}},
		}}}},
	}}
}

// patchesBy are the runtime patches of manager.
func patchesBy(list []trainer.RuntimePatch, manager string) []trainer.RuntimePatch {
	var out []trainer.RuntimePatch
	for _, p := range list {
		if p.Manager == manager {
			out = append(out, p)
		}
	}
	return out
}

// userPatches are the runtime patches no integration injected.
func userPatches(list []trainer.RuntimePatch) []trainer.RuntimePatch {
	var out []trainer.RuntimePatch
	for _, p := range list {
		if p.Manager != names.RuntimePatchManager && p.Manager != names.InTreeRuntimePatchManager {
			out = append(out, p)
		}
	}
	return out
}

// podTemplatePatches are a runtime patch's pod template patches by
// replicatedJob.
func podTemplatePatches(p trainer.RuntimePatch) map[string]*trainer.PodTemplatePatch {
	out := map[string]*trainer.PodTemplatePatch{}
	if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil || p.TrainingRuntimeSpec.Template.Spec == nil {
		return out
	}
	for _, rj := range p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
		if rj.Template != nil && rj.Template.Spec != nil && rj.Template.Spec.Template != nil {
			out[rj.Name] = rj.Template.Spec.Template
		}
	}
	return out
}

func priorityClass(t *testing.T, name string, value int32) {
	t.Helper()
	create(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
}

// unstructuredJob reads the TrainJob as the API server has it, fields our Go
// types don't know included.
func unstructuredJob(t *testing.T, tj *trainer.TrainJob) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(trainer.GroupVersion.WithKind("TrainJob"))
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestPreemptionRestoresTheOverrideListExactly(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 8})
	priorityClass(t, ns+"-low", 10)
	priorityClass(t, ns+"-high", 1000)
	create(t,
		trainingRuntime(ns, "low", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(8), Priority: ns + "-low"}),
		trainingRuntime(ns, "high", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(8), Priority: ns + "-high"}))

	// The low-priority job carries user patches and fields our types don't
	// model; all of it must come back exactly after preemption.
	nodePatch := func(template map[string]any) map[string]any {
		return map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
			map[string]any{"name": "node", "template": map[string]any{"spec": map[string]any{"template": template}}},
		}}}}
	}
	low := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": trainer.GroupVersion.String(), "kind": "TrainJob",
		"metadata": map[string]any{"name": "low", "namespace": ns, "labels": map[string]any{"kueue.x-k8s.io/queue-name": lq}},
		"spec": map[string]any{
			"runtimeRef":       map[string]any{"name": "low", "kind": "TrainingRuntime", "apiGroup": trainer.GroupVersion.Group},
			unmodeledSpecField: "research-42",
			"runtimePatches": []any{
				map[string]any{"manager": "example.com/first", unmodeledOverrideField: "first",
					"trainingRuntimeSpec": nodePatch(map[string]any{"spec": map[string]any{"nodeSelector": map[string]any{"disk": "ssd"}}})},
				map[string]any{"manager": "example.com/second", unmodeledOverrideField: "second",
					"trainingRuntimeSpec": nodePatch(map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "nlp"}}})},
			},
		},
	}}
	if err := k8s.Create(ctx, low); err != nil {
		t.Fatal(err)
	}
	lowJob := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "low"}}
	userList := unstructuredJob(t, lowJob).Object["spec"].(map[string]any)["runtimePatches"]
	// Our webhook gave the queued job Kueue's empty runtime patch, as
	// Kueue's own webhook does, so Kueue's built-in integration could run it
	// after a switch back; it is kept through every admission and stop.
	if list, _ := userList.([]any); len(list) != 3 || list[1].(map[string]any)[unmodeledOverrideField] != "second" ||
		list[2].(map[string]any)["manager"] != names.InTreeRuntimePatchManager {
		t.Fatalf("the stored user patches lost what this test checks is kept, or lack Kueue's mark: %v", userList)
	}

	running := waitRunning(t, lowJob)
	if n := len(running.Spec.RuntimePatches); n != 4 || running.Spec.RuntimePatches[3].Manager != names.RuntimePatchManager {
		t.Fatalf("want 2 user patches, Kueue's mark + ours last, got %d: %+v", n, running.Spec.RuntimePatches)
	}
	if u := unstructuredJob(t, lowJob); u.Object["spec"].(map[string]any)[unmodeledSpecField] != "research-42" {
		t.Fatalf("admission lost spec.%s", unmodeledSpecField)
	}
	jobSetOf(t, lowJob)
	setJobsStatus(t, ns, "low", "node", 1, 0)
	eventually(t, "low job reported active", func() error {
		if got := getTrainJob(t, lowJob); len(got.Status.JobsStatus) == 0 || ptr.Deref(got.Status.JobsStatus[0].Active, 0) == 0 {
			return fmt.Errorf("jobsStatus %+v", got.Status.JobsStatus)
		}
		return nil
	})

	high := trainJob(ns, "high", "high", lq)
	create(t, high)

	// Preempted: suspended at once, but our patch stays while its pods
	// drain (Trainer forbids patch changes on an active JobSet).
	eventually(t, "low job suspended", func() error {
		if !ptr.Deref(getTrainJob(t, lowJob).Spec.Suspend, false) {
			return fmt.Errorf("not suspended")
		}
		return nil
	})
	consistently(t, "our patch kept while draining", time.Second, func() error {
		if !(shape.RuntimePatches{}).Injected(fixtures.Ours(getTrainJob(t, lowJob))) {
			return fmt.Errorf("our patch removed while the job's pods still run")
		}
		return nil
	})
	setJobsStatus(t, ns, "low", "node", 0, 0)

	eventually(t, "low job restored", func() error {
		got := unstructuredJob(t, lowJob).Object["spec"].(map[string]any)
		if diff := cmp.Diff(userList, got["runtimePatches"]); diff != "" {
			return fmt.Errorf("runtime patches (-user +now):\n%s", diff)
		}
		if got[unmodeledSpecField] != "research-42" {
			return fmt.Errorf("spec.%s lost: %v", unmodeledSpecField, got[unmodeledSpecField])
		}
		return nil
	})
	waitRunning(t, high)
	lowWl := fixtures.WaitWorkload(t, ctx, k8s, lowJob)
	if workload.HasQuotaReservation(lowWl) {
		t.Errorf("preempted Workload still holds quota")
	}
	eventually(t, "Restored event", func() error { return hasEvent(t, lowJob, "Restored", "") })
}

func TestFinishedInitializersAreReclaimable(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	create(t, trainingRuntime(ns, "init", torchPolicy(2),
		role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: cpus("2")},
		role{Name: "model-initializer", Ancestor: "model-initializer", Requests: cpus("2")},
		role{Name: "node", Ancestor: "trainer", Requests: gpus(1), DependsOn: []string{"dataset-initializer", "model-initializer"}}))
	tj := trainJob(ns, "job", "init", lq)
	create(t, tj)
	waitRunning(t, tj)
	jobSetOf(t, tj)
	setJobsStatus(t, ns, "job", "dataset-initializer", 0, 1)
	setJobsStatus(t, ns, "job", "model-initializer", 0, 1)
	eventually(t, "reclaimable pods", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		want := []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}, {Name: "model-initializer", Count: 1}}
		if diff := cmp.Diff(want, wl.Status.ReclaimablePods); diff != "" {
			return fmt.Errorf("reclaimable pods (-want +got):\n%s\njobsStatus: %s", diff, jobsStatus(getTrainJob(t, tj)))
		}
		return nil
	})
}

// A structural edit of the runtime under a running job: its JobSet can't
// follow, so neither may its readiness nor its reclaimable pods. Judged on
// the live runtime, the new replicatedJob would make every running job of
// the runtime not ready (mass eviction under waitForPodsReady), and the
// initializer's new parallelism would report more reclaimable pods than
// were admitted, which Kueue refuses.
func TestRuntimeEditedUnderARunningJobKeepsItsReadinessAndReclaimablePods(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	rt := initThenTrain(ns, "init")
	create(t, rt)
	tj := trainJob(ns, "job", "init", lq)
	create(t, tj)
	waitRunning(t, tj)
	jobSetOf(t, tj)
	setJobsStatus(t, ns, "job", "dataset-initializer", 0, 1)
	setJobsStatus(t, ns, "job", "node", 2, 0)
	wantReclaimable := []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}}
	steady := func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if !workload.IsAdmitted(wl) || !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady) {
			return fmt.Errorf("not admitted and ready: %v (jobsStatus %s)", wl.Status.Conditions, jobsStatus(getTrainJob(t, tj)))
		}
		if diff := cmp.Diff(wantReclaimable, wl.Status.ReclaimablePods); diff != "" {
			return fmt.Errorf("reclaimable pods (-want +got):\n%s", diff)
		}
		if ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) {
			return fmt.Errorf("suspended")
		}
		return nil
	}
	eventually(t, "running, ready, initializer reclaimable", steady)
	admitted := fixtures.WaitWorkload(t, ctx, k8s, tj)

	eventually(t, "runtime edited: a new replicatedJob, more nodes", func() error {
		edited := &trainer.TrainingRuntime{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(rt), edited); err != nil {
			return err
		}
		edited.Spec.MLPolicy.NumNodes = ptr.To[int32](4)
		edited.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Parallelism = ptr.To[int32](3)
		eval := edited.Spec.Template.Spec.ReplicatedJobs[0].DeepCopy()
		eval.Name = "evaluator"
		eval.Template.Labels = nil
		edited.Spec.Template.Spec.ReplicatedJobs = append(edited.Spec.Template.Spec.ReplicatedJobs, *eval)
		return k8s.Update(ctx, edited)
	})
	consistently(t, "the running job is judged on what it was admitted with", 5*time.Second, func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); wl.UID != admitted.UID {
			return fmt.Errorf("Workload replaced")
		}
		return steady()
	})
}

func TestMissingRuntimeWaitsWithoutHotLoopAndProceedsWhenCreated(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 0})
	// Trainer's webhook refuses a TrainJob whose runtime is missing, but the
	// runtime can go away later (a forced delete), or Trainer's webhook may
	// not run at all (a MultiKueue manager). Queue the job, then delete it.
	rt := trainingRuntime(ns, "later", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)})
	create(t, rt)
	tj := trainJob(ns, "job", "later", lq)
	create(t, tj)
	fixtures.WaitWorkload(t, ctx, k8s, tj)
	if err := k8s.Delete(ctx, rt); err != nil {
		t.Fatal(err)
	}
	eventually(t, "RuntimeNotFound event", func() error { return hasEvent(t, tj, "RuntimeNotFound", "TrainingRuntime "+ns+"/later") })
	// Quota for it: Kueue admits it, and the reservation goes straight back
	// (its Workload held out of the queue until the runtime exists).
	setGPUQuota(t, ns, 8)
	eventually(t, "Workload held for its runtime, without quota", func() error {
		if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); ptr.Deref(wl.Spec.Active, true) || workload.HasQuotaReservation(wl) {
			return fmt.Errorf("Workload active %v, conditions %v", wl.Spec.Active, wl.Status.Conditions)
		}
		return nil
	})
	consistently(t, "job waits for its runtime, out of the queue", 2*time.Second, func() error {
		if !ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) {
			return fmt.Errorf("started without a runtime")
		}
		if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); ptr.Deref(wl.Spec.Active, true) || workload.HasQuotaReservation(wl) {
			return fmt.Errorf("Workload active %v, conditions %v: it holds quota it can't use", wl.Spec.Active, wl.Status.Conditions)
		}
		return nil
	})
	// No hot loop: once nothing changes, nothing is retried. (Each change
	// to the job or its Workload may be answered with one more event.)
	before := eventCount(tj, integration.ReasonRuntimeNotFound)
	if before == 0 {
		t.Fatalf("the API has a %s event the count does not: this test could not see a hot loop", integration.ReasonRuntimeNotFound)
	}
	// 3 s: a reconcile retried with the controller's backoff (5 ms,
	// doubling) would have run about ten times by then.
	consistently(t, "no RuntimeNotFound loop", 3*time.Second, func() error {
		if after := eventCount(tj, integration.ReasonRuntimeNotFound); after-before > 1 {
			return fmt.Errorf("RuntimeNotFound recorded %d more times with nothing changing: the job is retried in a loop", after-before)
		}
		return nil
	})

	create(t, trainingRuntime(ns, "later", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	waitRunning(t, tj)
}

func setGPUQuota(t *testing.T, cqName string, n int64) {
	t.Helper()
	eventually(t, "quota update", func() error {
		cq := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: cqName}, cq); err != nil {
			return err
		}
		for i := range cq.Spec.ResourceGroups[0].Flavors {
			cq.Spec.ResourceGroups[0].Flavors[i].Resources[2].NominalQuota = gpus(n)[gpu]
		}
		return k8s.Update(ctx, cq)
	})
}

func jobsStatus(tj *trainer.TrainJob) string {
	b, _ := json.Marshal(tj.Status.JobsStatus)
	return string(b)
}

func queueJob(t *testing.T, tj *trainer.TrainJob, lq string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":%q}}}`, lq)
	if err := k8s.Patch(ctx, tj.DeepCopy(), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// eventCount is how many times trainjob-kueue recorded an event of reason
// on obj.
func eventCount(obj client.Object, reason string) int {
	return ourEvents.count(obj, reason)
}

func TestRuntimeEditedWhileRunningDoesNotStopTheJob(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	rt := trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(2)})
	create(t, rt)
	tj := trainJob(ns, "job", "rt", lq)
	create(t, tj)
	waitRunning(t, tj)
	wl := fixtures.WaitWorkload(t, ctx, k8s, tj)

	edited := &trainer.TrainingRuntime{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(rt), edited); err != nil {
		t.Fatal(err)
	}
	edited.Spec.MLPolicy.NumNodes = ptr.To[int32](4)
	edited.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources.Requests = gpus(1)
	if err := k8s.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	consistently(t, "job keeps running on its admission", 3*time.Second, func() error {
		if ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) {
			return fmt.Errorf("the running job was suspended after a runtime edit")
		}
		now := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if now.UID != wl.UID || !workload.IsAdmitted(now) {
			return fmt.Errorf("Workload replaced or unadmitted")
		}
		return nil
	})
}

func TestFlavorThePodsCannotUseIsNeverAssigned(t *testing.T) {
	ns := newNamespace(t)
	// The only flavor pins pool=a100; the user's patch pins pool=h100.
	// The PodSets carry the user's nodeSelector, so Kueue sees the mismatch
	// and keeps the job pending with its own reason, holding no quota.
	lq := queue(t, ns, pool{Name: "a100", Labels: map[string]string{"pool": "a100"}, GPUs: 8})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "job", "rt", lq)
	tj.Spec.RuntimePatches = []trainer.RuntimePatch{userPatch("example.com/user", "node", "pool", "h100")}
	create(t, tj)
	eventually(t, "pending with Kueue's reason", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "a100") {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	consistently(t, "job never starts", time.Second, func() error {
		if !ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) {
			return fmt.Errorf("job started on a flavor its pods cannot use")
		}
		return nil
	})
}

func TestNodeSelectorConflictAtAdmissionDoesNotStartTheJob(t *testing.T) {
	ns := newNamespace(t)
	// An admission check sets disk=hdd on the pods while the runtime pins
	// disk=ssd: the conflict only shows at injection.
	ac := &kueue.AdmissionCheck{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec:       kueue.AdmissionCheckSpec{ControllerName: "trainjob-kueue.dev/test-check"},
	}
	create(t, ac)
	eventually(t, "admission check active", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(ac), ac); err != nil {
			return err
		}
		apimeta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: kueue.AdmissionCheckActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "test"})
		return k8s.Status().Update(ctx, ac)
	})
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 8})
	eventually(t, "ClusterQueue uses the check", func() error {
		cq := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return err
		}
		cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(ac.Name)}}}
		return k8s.Update(ctx, cq)
	})
	rt := trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)})
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	create(t, rt)
	tj := trainJob(ns, "job", "rt", lq)
	create(t, tj)

	eventually(t, "the check answers with a conflicting podSetUpdate", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if len(wl.Status.AdmissionChecks) == 0 {
			return fmt.Errorf("check not pending yet")
		}
		wl.Status.AdmissionChecks[0].State = kueue.CheckStateReady
		wl.Status.AdmissionChecks[0].Message = "provisioned"
		wl.Status.AdmissionChecks[0].PodSetUpdates = []kueue.PodSetUpdate{{Name: "node", NodeSelector: map[string]string{"disk": "hdd"}}}
		return k8s.Status().Update(ctx, wl)
	})
	eventually(t, "conflict event", func() error {
		return hasEvent(t, tj, "NodeSelectorConflict", "disk=hdd")
	})
	if err := hasEvent(t, tj, "NodeSelectorConflict", ns+"-gpu"); err != nil {
		t.Errorf("the event does not name the flavor: %v", err)
	}
	eventually(t, "quota released", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c == nil || !strings.Contains(c.Message, "disk") {
			return fmt.Errorf("Workload not finished with the conflict: %v", wl.Status.Conditions)
		}
		return nil
	})
	got := getTrainJob(t, tj)
	if !ptr.Deref(got.Spec.Suspend, false) || (shape.RuntimePatches{}).Injected(fixtures.Ours(got)) {
		t.Errorf("job started or injected despite the conflict: suspend=%v runtimePatches=%+v", got.Spec.Suspend, got.Spec.RuntimePatches)
	}
}

func TestForgedOwnershipMarkerIsRejected(t *testing.T) {
	ns := newNamespace(t)
	// No quota at all: the second job stays suspended, where Trainer allows
	// its runtime patches to change, so only our webhook may refuse.
	lq := queue(t, ns, pool{Name: "none", CPUs: "0"})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: cpus("1")}))
	// A patch under our manager key, written by a user.
	forged := userPatch(names.RuntimePatchManager, "node", "pool", "x")
	refused := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "spec.runtimePatches[0]") && strings.Contains(err.Error(), "runtime patches with manager trainjob-kueue.dev/manager are written by trainjob-kueue at admission") && strings.Contains(err.Error(), "manager name of your own")
	}
	tj := trainJob(ns, "job", "rt", lq)
	tj.Spec.RuntimePatches = []trainer.RuntimePatch{forged}
	if err := k8s.Create(ctx, tj); !refused(err) {
		t.Fatalf("create with a forged patch: %v", err)
	}

	// A patch of the user's under the in-tree integration's key would be
	// removed at admission as that integration's: refused at create.
	inTree := trainJob(ns, "intree", "rt", lq)
	inTree.Spec.RuntimePatches = []trainer.RuntimePatch{userPatch(names.InTreeRuntimePatchManager, "node", "pool", "x")}
	if err := k8s.Create(ctx, inTree); err == nil || !strings.Contains(err.Error(), "spec.runtimePatches[0].manager") || !strings.Contains(err.Error(), "in-tree TrainJob integration") {
		t.Fatalf("create with a patch under the in-tree integration's key: %v", err)
	}

	// Adding one to an existing job is refused too.
	ok := trainJob(ns, "job2", "rt", lq)
	create(t, ok)
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"runtimePatches": []any{forged}}})
	if err := k8s.Patch(ctx, ok, client.RawPatch(types.MergePatchType, patch)); !refused(err) {
		t.Fatalf("update with a forged patch: %v", err)
	}
	// The same patch under the user's own key is theirs to write.
	mine := userPatch("example.com/user", "node", "pool", "x")
	patch, _ = json.Marshal(map[string]any{"spec": map[string]any{"runtimePatches": []any{mine}}})
	if err := k8s.Patch(ctx, ok, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("update with the user's own patch: %v", err)
	}
}

func TestConcurrentUserEditIsNeverOverwritten(t *testing.T) {
	ns := newNamespace(t)
	// No quota yet: the job waits, the user edits, then quota appears.
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 0})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "job", "rt", lq)
	tj.Spec.RuntimePatches = []trainer.RuntimePatch{userPatch("example.com/user", "node", "disk", "ssd")}
	create(t, tj)
	fixtures.WaitWorkload(t, ctx, k8s, tj)

	// The user replaces their patches while the job is queued...
	edit := getTrainJob(t, tj)
	list := []trainer.RuntimePatch{userPatch("example.com/user", "node", "disk", "nvme"), userPatch("example.com/zone", "node", "zone", "z1")}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"runtimePatches": list}})
	if err := k8s.Patch(ctx, edit, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	// As stored: Trainer stamps each patch with the time it was written.
	if got := edit.Spec.RuntimePatches; len(got) != 2 || podTemplatePatches(got[0])["node"].Spec.NodeSelector["disk"] != "nvme" {
		t.Fatalf("the edit was not stored: %+v", got)
	}
	// ...and then quota appears.
	setGPUQuota(t, ns, 8)
	running := waitRunning(t, tj)
	if diff := cmp.Diff(edit.Spec.RuntimePatches, userPatches(running.Spec.RuntimePatches)); diff != "" {
		t.Errorf("the user's edit did not survive admission (-edit +now):\n%s", diff)
	}
	if n := len(patchesBy(running.Spec.RuntimePatches, names.RuntimePatchManager)); n != 1 {
		t.Errorf("want our one patch, got %d: %+v", n, running.Spec.RuntimePatches)
	}
	js := jobSetOf(t, tj)
	if sel := replicatedJob(js, "node").Template.Spec.Template.Spec.NodeSelector; sel["disk"] != "nvme" || sel["zone"] != "z1" || sel["pool"] != "gpu" {
		t.Errorf("pods' nodeSelector %v: want the user's edit and the flavor's", sel)
	}
}
