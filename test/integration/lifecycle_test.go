package integration_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
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

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/test/fixtures"
)

func userEntry(job, key, value string) trainjob.PodTemplateOverride {
	return trainjob.PodTemplateOverride{
		TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: job}},
		Spec:       &trainjob.PodTemplateSpecOverride{NodeSelector: map[string]string{key: value}},
	}
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

	// The low-priority job carries user entries and fields our types don't
	// model; all of it must come back exactly after preemption.
	low := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": trainer.GroupVersion.String(), "kind": "TrainJob",
		"metadata": map[string]any{"name": "low", "namespace": ns, "labels": map[string]any{"kueue.x-k8s.io/queue-name": lq}},
		"spec": map[string]any{
			"runtimeRef":       map[string]any{"name": "low", "kind": "TrainingRuntime", "apiGroup": trainer.GroupVersion.Group},
			unmodeledSpecField: "research-42",
			"podTemplateOverrides": []any{
				map[string]any{"targetJobs": []any{map[string]any{"name": "node"}}, unmodeledOverrideField: "first", "spec": map[string]any{"nodeSelector": map[string]any{"disk": "ssd"}}},
				map[string]any{"targetJobs": []any{map[string]any{"name": "node"}}, unmodeledOverrideField: "second", "metadata": map[string]any{"labels": map[string]any{"team": "nlp"}}},
			},
		},
	}}
	if err := k8s.Create(ctx, low); err != nil {
		t.Fatal(err)
	}
	lowJob := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "low"}}
	userList := unstructuredJob(t, lowJob).Object["spec"].(map[string]any)["podTemplateOverrides"]

	running := waitRunning(t, lowJob)
	if n := len(running.Spec.PodTemplateOverrides); n != 3 {
		t.Fatalf("want 2 user entries + ours, got %d", n)
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

	// Preempted: suspended at once, but our entries stay while its pods
	// drain (Trainer forbids override changes on an active JobSet).
	eventually(t, "low job suspended", func() error {
		if !ptr.Deref(getTrainJob(t, lowJob).Spec.Suspend, false) {
			return fmt.Errorf("not suspended")
		}
		return nil
	})
	consistently(t, "entries kept while draining", time.Second, func() error {
		if !(shape.PodTemplateOverrides{}).Injected(fixtures.Ours(getTrainJob(t, lowJob))) {
			return fmt.Errorf("entries removed while the job's pods still run")
		}
		return nil
	})
	setJobsStatus(t, ns, "low", "node", 0, 0)

	eventually(t, "low job restored", func() error {
		got := unstructuredJob(t, lowJob).Object["spec"].(map[string]any)
		if diff := cmp.Diff(userList, got["podTemplateOverrides"]); diff != "" {
			return fmt.Errorf("override list (-user +now):\n%s", diff)
		}
		if got[unmodeledSpecField] != "research-42" {
			return fmt.Errorf("spec.%s lost: %v", unmodeledSpecField, got[unmodeledSpecField])
		}
		return nil
	})
	waitRunning(t, high)
	lowWl := workloadOf(t, lowJob)
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
		wl := workloadOf(t, tj)
		want := []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}, {Name: "model-initializer", Count: 1}}
		if diff := cmp.Diff(want, wl.Status.ReclaimablePods); diff != "" {
			return fmt.Errorf("reclaimable pods (-want +got):\n%s\njobsStatus: %s", diff, jobsStatus(getTrainJob(t, tj)))
		}
		return nil
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
	workloadOf(t, tj)
	if err := k8s.Delete(ctx, rt); err != nil {
		t.Fatal(err)
	}
	eventually(t, "RuntimeNotFound event", func() error { return hasEvent(t, tj, "RuntimeNotFound", "TrainingRuntime "+ns+"/later") })
	setGPUQuota(t, ns, 8)
	consistently(t, "job waits for its runtime", 2*time.Second, func() error {
		if !ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) {
			return fmt.Errorf("started without a runtime")
		}
		return nil
	})
	// No hot loop: once nothing changes, nothing is retried. (Each change
	// to the job or its Workload may be answered with one more event.)
	before := eventCount(t, tj, "RuntimeNotFound")
	time.Sleep(3 * time.Second)
	if after := eventCount(t, tj, "RuntimeNotFound"); after-before > 1 {
		t.Errorf("RuntimeNotFound recorded %d more times in 3s of quiet: the job is retried in a loop", after-before)
	}

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

func eventCount(t *testing.T, obj client.Object, reason string) int32 {
	t.Helper()
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	var n int32
	for _, e := range events.Items {
		if e.InvolvedObject.Name == obj.GetName() && e.Reason == reason {
			n += max(e.Count, 1)
		}
	}
	return n
}

func TestRuntimeEditedWhileRunningDoesNotStopTheJob(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	rt := trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(2)})
	create(t, rt)
	tj := trainJob(ns, "job", "rt", lq)
	create(t, tj)
	waitRunning(t, tj)
	wl := workloadOf(t, tj)

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
		now := workloadOf(t, tj)
		if now.UID != wl.UID || !workload.IsAdmitted(now) {
			return fmt.Errorf("Workload replaced or unadmitted")
		}
		return nil
	})
}

func TestFlavorThePodsCannotUseIsNeverAssigned(t *testing.T) {
	ns := newNamespace(t)
	// The only flavor pins pool=a100; the user's override pins pool=h100.
	// The PodSets carry the user's nodeSelector, so Kueue sees the mismatch
	// and keeps the job pending with its own reason, holding no quota.
	lq := queue(t, ns, pool{Name: "a100", Labels: map[string]string{"pool": "a100"}, GPUs: 8})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "job", "rt", lq)
	tj.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{userEntry("node", "pool", "h100")}
	create(t, tj)
	eventually(t, "pending with Kueue's reason", func() error {
		wl := workloadOf(t, tj)
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
		wl := workloadOf(t, tj)
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
		wl := workloadOf(t, tj)
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c == nil || !strings.Contains(c.Message, "disk") {
			return fmt.Errorf("Workload not finished with the conflict: %v", wl.Status.Conditions)
		}
		return nil
	})
	got := getTrainJob(t, tj)
	if !ptr.Deref(got.Spec.Suspend, false) || (shape.PodTemplateOverrides{}).Injected(fixtures.Ours(got)) {
		t.Errorf("job started or injected despite the conflict: suspend=%v overrides=%v", got.Spec.Suspend, got.Spec.PodTemplateOverrides)
	}
}

func TestForgedOwnershipMarkerIsRejected(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "none"})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: cpus("1")}))
	tj := trainJob(ns, "job", "rt", lq)
	forged := userEntry("node", "pool", "x")
	forged.Metadata = &metav1.ObjectMeta{Labels: map[string]string{shape.OwnedLabel: "true"}}
	tj.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{forged}
	err := k8s.Create(ctx, tj)
	if err == nil || !strings.Contains(err.Error(), shape.OwnedLabel) {
		t.Fatalf("create with a forged marker: %v", err)
	}

	// Adding one to an existing job is refused too.
	ok := trainJob(ns, "job2", "rt", lq)
	create(t, ok)
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"podTemplateOverrides": []any{forged}}})
	err = k8s.Patch(ctx, ok, client.RawPatch(types.MergePatchType, patch))
	if err == nil || !strings.Contains(err.Error(), shape.OwnedLabel) {
		t.Fatalf("update with a forged marker: %v", err)
	}
}

func TestConcurrentUserEditIsNeverOverwritten(t *testing.T) {
	ns := newNamespace(t)
	// No quota yet: the job waits, the user edits, then quota appears.
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 0})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "job", "rt", lq)
	tj.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{userEntry("node", "disk", "ssd")}
	create(t, tj)
	workloadOf(t, tj)

	// The user replaces their entries while the job is queued...
	edit := getTrainJob(t, tj)
	edit.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{userEntry("node", "disk", "nvme"), userEntry("node", "zone", "z1")}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"podTemplateOverrides": edit.Spec.PodTemplateOverrides}})
	if err := k8s.Patch(ctx, edit, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	// ...and then quota appears.
	setGPUQuota(t, ns, 8)
	running := waitRunning(t, tj)
	var users []trainjob.PodTemplateOverride
	for _, o := range running.Spec.PodTemplateOverrides {
		if o.Metadata == nil || o.Metadata.Labels[shape.OwnedLabel] == "" {
			users = append(users, o)
		}
	}
	if diff := cmp.Diff(edit.Spec.PodTemplateOverrides, users); diff != "" {
		t.Errorf("the user's edit did not survive admission (-edit +now):\n%s", diff)
	}
	js := jobSetOf(t, tj)
	if sel := replicatedJob(js, "node").Template.Spec.Template.Spec.NodeSelector; sel["disk"] != "nvme" || sel["zone"] != "z1" || sel["pool"] != "gpu" {
		t.Errorf("pods' nodeSelector %v: want the user's edit and the flavor's", sel)
	}
}
