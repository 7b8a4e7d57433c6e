package integration_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func userPatches16(n int) []trainer.RuntimePatch {
	out := make([]trainer.RuntimePatch, n)
	for i := range out {
		out[i] = userPatch(fmt.Sprintf("example.com/team-%d", i), "node", fmt.Sprintf("k%d", i), "v")
	}
	return out
}

// Trainer takes at most 16 runtime patches: a job that already has 16 of
// its own could never take the admission's, so it is refused at create,
// not admitted to hold quota it can never use.
func TestJobWithNoRoomForTheAdmissionIsRefusedAtCreate(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 8})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))

	full := trainJob(ns, "full", "rt", lq)
	full.Spec.RuntimePatches = userPatches16(shape.MaxRuntimePatches)
	err := k8s.Create(ctx, full)
	if err == nil || !strings.Contains(err.Error(), "spec.runtimePatches") || !strings.Contains(err.Error(), "at most 15") {
		t.Fatalf("create with 16 runtime patches of the user's: %v, want a refusal naming spec.runtimePatches and the fix", err)
	}

	// 15 leave room: admitted, started, with ours as the 16th.
	roomy := trainJob(ns, "roomy", "rt", lq)
	roomy.Spec.RuntimePatches = userPatches16(shape.MaxRuntimePatches - 1)
	create(t, roomy)
	got := waitRunning(t, roomy)
	if n, ours := len(got.Spec.RuntimePatches), len(patchesBy(got.Spec.RuntimePatches, names.RuntimePatchManager)); n != shape.MaxRuntimePatches || ours != 1 {
		t.Errorf("started with %d runtime patches (%d ours), want %d with ours last", n, ours, shape.MaxRuntimePatches)
	}
	// Adding a 16th of the user's while it holds our entry is refused as well.
	patch := fmt.Appendf(nil, `[{"op":"add","path":"/spec/runtimePatches/0","value":%s}]`, mustJSON(t, userPatch("example.com/late", "node", "late", "v")))
	if err := k8s.Patch(ctx, got, client.RawPatch(types.JSONPatchType, patch)); err == nil {
		t.Error("a 16th user patch added to an admitted job was accepted")
	}
}

// An admission policy that refuses the start: not a race to retry, nor
// the job's end. The job stays suspended and unplaced, its Workload is
// held (deactivated, not finished), a Warning event names the policy and
// carries its message, and the quota goes to the next job. Once the policy
// is mended the held job is queued again after its backoff and starts.
func TestStartRefusedByAnAdmissionPolicyIsHeldAndRetried(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 0})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))

	const deny = "TrainJobs labelled start=never may not start"
	refused := trainJob(ns, "refused", "rt", lq)
	refused.Labels["start"] = "never"
	create(t, refused)
	fixtures.WaitWorkload(t, ctx, k8s, refused)
	lift := denyUpdates(t, ns, `object.metadata.?labels[?"start"].orValue("") != "never" || object.spec.?suspend.orValue(false)`, deny, refused)
	setGPUQuota(t, ns, 1)

	eventually(t, "StartRefusedByPolicy event naming the policy, with its message", func() error {
		return hasEvent(t, refused, integration.ReasonStartRefusedByPolicy, "ValidatingAdmissionPolicy "+ns+" (binding "+ns+") refused the start: "+deny)
	})
	eventually(t, "refused job held, its quota released", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, refused)
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			t.Fatalf("finished: %v", wl.Status.Conditions)
		}
		if workload.HasQuotaReservation(wl) || ptr.Deref(wl.Spec.Active, true) || wl.Annotations[names.HeldByPolicyAnnotation] == "" {
			return fmt.Errorf("active %v, annotations %v, conditions %v", wl.Spec.Active, wl.Annotations, wl.Status.Conditions)
		}
		return nil
	})
	// The quota the refused job held goes to the next one.
	next := trainJob(ns, "next", "rt", lq)
	create(t, next)
	waitRunning(t, next)
	got := getTrainJob(t, refused)
	if !ptr.Deref(got.Spec.Suspend, false) || (shape.RuntimePatches{}).Injected(fixtures.Ours(got)) {
		t.Errorf("refused job started or kept entries: suspend=%v runtimePatches=%+v", got.Spec.Suspend, got.Spec.RuntimePatches)
	}
	// The policy mended and the quota back: the held job starts on its
	// next try.
	lift()
	if err := k8s.Delete(ctx, next); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, refused)
	if wl := fixtures.WaitWorkload(t, ctx, k8s, refused); apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
		t.Errorf("finished: %v", wl.Status.Conditions)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// denyUpdates puts a ValidatingAdmissionPolicy in force that refuses
// updates of TrainJobs in ns unless expression holds, with message; probe
// is a job of ns the test uses to see the policy in force. It returns the
// policy's removal.
func denyUpdates(t *testing.T, ns, expression, message string, probe *trainer.TrainJob) func() {
	t.Helper()
	policy, binding := fixtures.UpdatePolicy(ns,
		admissionregistrationv1.Validation{Expression: expression, Message: message},
		admissionregistrationv1.Validation{Expression: `!has(object.metadata.annotations) || !("policy-probe" in object.metadata.annotations)`, Message: "probe"})
	create(t, policy, binding)
	remove := func() {
		_ = k8s.Delete(ctx, binding)
		_ = k8s.Delete(ctx, policy)
	}
	t.Cleanup(remove)
	// A dry run: a probe let through before the policy is in force must
	// not leave the annotation that every later update is refused for.
	eventually(t, "policy in force", func() error {
		patch := []byte(`{"metadata":{"annotations":{"policy-probe":"x"}}}`)
		if err := k8s.Patch(ctx, probe.DeepCopy(), client.RawPatch(types.MergePatchType, patch), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "probe") {
			return fmt.Errorf("probe annotation: %v", err)
		}
		return nil
	})
	return remove
}

// A refused stop is said, retried with backoff, and goes through once the
// refusal is lifted.
func TestStopRefusedByTheAPIServerIsSaidAndRetried(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 1})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "job", "rt", lq)
	create(t, tj)
	waitRunning(t, tj)

	const deny = "running TrainJobs of this namespace may not be suspended"
	lift := denyUpdates(t, ns, `!object.spec.?suspend.orValue(false) || oldObject.spec.?suspend.orValue(false)`, deny, tj)
	eventually(t, "Workload deactivated", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		wl.Spec.Active = ptr.To(false)
		return k8s.Update(ctx, wl)
	})
	eventually(t, "StopRefused event with the server's message", func() error {
		return hasEvent(t, tj, integration.ReasonStopRefused, deny)
	})
	if got := getTrainJob(t, tj); ptr.Deref(got.Spec.Suspend, false) {
		t.Fatal("suspended despite the policy")
	}
	lift()
	eventually(t, "stopped and restored once the policy is gone", func() error {
		got := getTrainJob(t, tj)
		if !ptr.Deref(got.Spec.Suspend, false) || len(patchesBy(got.Spec.RuntimePatches, names.RuntimePatchManager)) != 0 {
			return fmt.Errorf("suspend=%v runtimePatches=%d", ptr.Deref(got.Spec.Suspend, false), len(got.Spec.RuntimePatches))
		}
		return nil
	})
}

// What reconciling could only report later is refused at create, naming
// the field and the fix.
func TestUnrunnableJobsAreRefusedAtCreate(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 8})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	for name, tc := range map[string]struct {
		perNode corev1.ResourceList
		want    string
	}{
		"negative cpu":   {corev1.ResourceList{"cpu": resource.MustParse("-2")}, "spec.trainer.resourcesPerNode.requests cpu is -2: quantities must not be negative"},
		"half a GPU":     {corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("0.5")}, "nvidia.com/gpu is 500m: extended resources take whole numbers"},
		"negative limit": {nil, "spec.trainer.resourcesPerNode.limits memory is -1Gi"},
	} {
		t.Run(name, func(t *testing.T) {
			tj := trainJob(ns, strings.ToLower(strings.ReplaceAll(name, " ", "-")), "rt", lq)
			tj.Spec.Trainer = &trainer.Trainer{ResourcesPerNode: &corev1.ResourceRequirements{Requests: tc.perNode}}
			if tc.perNode == nil {
				tj.Spec.Trainer.ResourcesPerNode.Limits = corev1.ResourceList{"memory": resource.MustParse("-1Gi")}
			}
			if err := k8s.Create(ctx, tj); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want a refusal containing %q", err, tc.want)
			}
		})
	}

	// A replicatedJob with parallelism 0 runs one pod in Trainer: it is
	// queued, and booked for one.
	rt := trainingRuntime(ns, "zero", nil, role{Name: "trainer", Ancestor: "trainer", Requests: gpus(1)})
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Parallelism = ptr.To[int32](0)
	create(t, rt)
	zero := trainJob(ns, "zero", "zero", lq)
	create(t, zero)
	if wl := fixtures.WaitWorkload(t, ctx, k8s, zero); len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Count != 1 {
		t.Errorf("PodSets %+v, want one of one pod", wl.Spec.PodSets)
	}
}

// A queue name in a namespace Kueue does not manage would hold the job
// suspended for ever: refused, naming the label and the way out.
func TestQueueNameInANamespaceKueueDoesNotManageIsRefused(t *testing.T) {
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "unmanaged-", Labels: map[string]string{unmanagedLabel: "true"}}}
	if err := k8s.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: cpus("1")}))
	eventually(t, "refused", func() error {
		err := k8s.Create(ctx, trainJob(ns, "queued", "rt", "lq"))
		if err == nil || !strings.Contains(err.Error(), "kueue.x-k8s.io/queue-name") || !strings.Contains(err.Error(), "not managed by Kueue") {
			return fmt.Errorf("create with a queue name: %v", err)
		}
		return nil
	})
	// Without one it is no business of ours: it runs as Trainer runs it.
	plain := trainJob(ns, "plain", "rt", "")
	create(t, plain)
	if got := getTrainJob(t, plain); ptr.Deref(got.Spec.Suspend, false) {
		t.Error("a job without a queue name in an unmanaged namespace was suspended")
	}
}

// References to objects that do not exist get a word, and the job proceeds
// once they do.
func TestMissingPriorityClassAndPrebuiltWorkloadAreSaid(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 8})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))

	wpc := ns + "-urgent"
	urgent := trainJob(ns, "urgent", "rt", lq)
	urgent.Labels["kueue.x-k8s.io/priority-class"] = wpc
	prebuilt := trainJob(ns, "prebuilt", "rt", lq)
	prebuilt.Labels["kueue.x-k8s.io/prebuilt-workload-name"] = "nowhere"
	create(t, urgent, prebuilt)
	eventually(t, "WorkloadPriorityClassNotFound event", func() error {
		return hasEvent(t, urgent, integration.ReasonPriorityClassNotFound, `names WorkloadPriorityClass "`+wpc+`", which does not exist`)
	})
	eventually(t, "PrebuiltWorkloadNotFound event", func() error {
		return hasEvent(t, prebuilt, integration.ReasonPrebuiltWorkloadNotFound, "names Workload "+ns+"/nowhere, which does not exist")
	})
	if !ptr.Deref(getTrainJob(t, prebuilt).Spec.Suspend, false) {
		t.Error("the job naming a missing prebuilt Workload runs")
	}

	// Created: the job is queued at once (the class is watched), not at
	// the next retry.
	created := time.Now()
	create(t, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: wpc}, Value: 1000})
	t.Cleanup(func() { _ = k8s.Delete(ctx, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: wpc}}) })
	wl := fixtures.WaitWorkload(t, ctx, k8s, urgent)
	if took := time.Since(created); took > 20*time.Second {
		t.Errorf("queued %s after the class was created: the creation is not watched", took)
	}
	if got := ptr.Deref(wl.Spec.Priority, 0); got != 1000 {
		t.Errorf("Workload priority %d, want the class's 1000", got)
	}
	// Said once, not on every retry.
	if n := eventCount(urgent, integration.ReasonPriorityClassNotFound); n != 1 {
		t.Errorf("%d WorkloadPriorityClassNotFound events, want 1", n)
	}
}

// checkedQueue is a queue whose ClusterQueue holds every admission at an
// admission check of the test's, so a job holds a quota reservation
// without starting until the test answers (answerCheck).
func checkedQueue(t *testing.T, ns string) string {
	t.Helper()
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
	// The flavor's taint makes the admission inject tolerations.
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 8,
		Taints: []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}})
	eventually(t, "ClusterQueue uses the check", func() error {
		cq := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return err
		}
		cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(ac.Name)}}}
		return k8s.Update(ctx, cq)
	})
	return lq
}

// reservedAtCheck waits until tj holds a quota reservation, its check pending.
func reservedAtCheck(t *testing.T, tj *trainer.TrainJob) {
	t.Helper()
	eventually(t, "quota reserved, check pending", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if !workload.HasQuotaReservation(wl) || len(wl.Status.AdmissionChecks) == 0 {
			return fmt.Errorf("not reserved yet: %v", wl.Status.Conditions)
		}
		return nil
	})
}

// answerCheck marks tj's admission check ready.
func answerCheck(t *testing.T, tj *trainer.TrainJob) {
	t.Helper()
	eventually(t, "the check answers", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if len(wl.Status.AdmissionChecks) == 0 {
			return fmt.Errorf("no check on the Workload yet")
		}
		wl.Status.AdmissionChecks[0].State = kueue.CheckStateReady
		wl.Status.AdmissionChecks[0].Message = "ready"
		return k8s.Status().Update(ctx, wl)
	})
}

// A job whose runtime is made unusable while it holds a reservation (an
// admission check still pending) can't be started: Trainer could not build
// it either. The reservation is released, not held for ever. (A runtime
// that is deleted is waited for without quota instead:
// TestRuntimeDeletedUnderAReservationGivesTheQuotaBackUntilItReturns.)
func TestRuntimeMadeUnusableUnderAReservationReleasesTheQuota(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(t *testing.T, rt *trainer.TrainingRuntime)
		reason string
		says   string
	}{
		"edited: a negative request": {
			mutate: func(t *testing.T, rt *trainer.TrainingRuntime) {
				eventually(t, "runtime edited: a negative request", func() error {
					if err := k8s.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
						return err
					}
					rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("-1")
					return k8s.Update(ctx, rt)
				})
			},
			reason: integration.ReasonInvalidRuntime, says: "quantities must not be negative",
		},
	} {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			lq := checkedQueue(t, ns)
			rt := trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)})
			create(t, rt)
			tj := trainJob(ns, "job", "rt", lq)
			create(t, tj)
			reservedAtCheck(t, tj)
			tc.mutate(t, rt)
			eventually(t, tc.reason+" event", func() error {
				return hasEvent(t, tj, tc.reason, tc.says)
			})
			answerCheck(t, tj)
			eventually(t, "reservation released", func() error {
				wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
				c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
				if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "quota reservation is released") {
					return fmt.Errorf("Workload not finished: %v", wl.Status.Conditions)
				}
				return nil
			})
			if !ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) {
				t.Error("a job without its runtime was started")
			}
		})
	}
}

// A job whose runtime is deleted (past Trainer's in-use finalizer, or on a
// Trainer without one) while it holds a reservation: nothing can build its
// pods, so its Workload is deactivated and the reservation goes back; the
// job is neither started nor finished, and runs once the runtime is back.
func TestRuntimeDeletedUnderAReservationGivesTheQuotaBackUntilItReturns(t *testing.T) {
	ns := newNamespace(t)
	lq := checkedQueue(t, ns)
	spec := func() *trainer.TrainingRuntime {
		return trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)})
	}
	rt := spec()
	create(t, rt)
	tj := trainJob(ns, "job", "rt", lq)
	create(t, tj)
	reservedAtCheck(t, tj)
	if err := fixtures.ForceDelete(ctx, k8s, rt); err != nil {
		t.Fatal(err)
	}
	eventually(t, "held without quota", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if ptr.Deref(wl.Spec.Active, true) || wl.Annotations[names.HeldForRuntimeAnnotation] == "" {
			return fmt.Errorf("Workload active %v, annotations %v", wl.Spec.Active, wl.Annotations)
		}
		if workload.HasQuotaReservation(wl) {
			return fmt.Errorf("still holds its reservation: %v", wl.Status.Conditions)
		}
		return nil
	})
	eventually(t, integration.ReasonHeldForRuntime+" event", func() error {
		return hasEvent(t, tj, integration.ReasonHeldForRuntime, "neither holds nor gets quota")
	})
	if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
		t.Fatalf("Workload finished: the job could never run again: %v", wl.Status.Conditions)
	}
	if !ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) {
		t.Fatal("a job without its runtime was started")
	}

	create(t, spec())
	reservedAtCheck(t, tj)
	if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); wl.Annotations[names.HeldForRuntimeAnnotation] != "" {
		t.Errorf("reactivated with the mark left: %v", wl.Annotations)
	}
	answerCheck(t, tj)
	waitRunning(t, tj)
}

// A queued job's placement edited after its quota was reserved: Kueue's
// equivalence check ignores it, so the reserved Workload stays. The start
// must be computed from the job as it is now: the admission's tolerations
// are injected as the complete list (Trainer's merge replaces it), and
// built from the stale template they would drop the user's new one.
func TestPlacementEditedUnderAReservationIsHonouredAtTheStart(t *testing.T) {
	ns := newNamespace(t)
	lq := checkedQueue(t, ns)
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	tj := trainJob(ns, "job", "rt", lq)
	create(t, tj)
	reservedAtCheck(t, tj)

	mine := corev1.Toleration{Key: "example.com/spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	p := userPatch("example.com/user", "node", "disk", "ssd")
	p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Tolerations = []corev1.Toleration{mine}
	// The user's edit, guarded by the resourceVersion read: a controller's
	// write in between (a status) fails its test, and it is made again.
	eventually(t, "the placement edited", func() error {
		edit := getTrainJob(t, tj)
		patch := fmt.Appendf(nil, `[{"op":"test","path":"/metadata/resourceVersion","value":%q},{"op":"add","path":"/spec/runtimePatches","value":%s}]`,
			edit.ResourceVersion, mustJSON(t, append(edit.Spec.RuntimePatches, p)))
		return k8s.Patch(ctx, edit, client.RawPatch(types.JSONPatchType, patch))
	})
	// Before the Workload is admitted Kueue compares tolerations too: a
	// reconcile of the edit that comes first replaces the Workload, which
	// queues again at the check. Either way the pods must start as edited:
	// answer the check of whichever Workload the job has.
	eventually(t, "started, the check of its Workload answered", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		if len(wl.Status.AdmissionChecks) > 0 && wl.Status.AdmissionChecks[0].State != kueue.CheckStateReady {
			wl.Status.AdmissionChecks[0].State = kueue.CheckStateReady
			wl.Status.AdmissionChecks[0].Message = "ready"
			if err := k8s.Status().Update(ctx, wl); err != nil {
				return err
			}
		}
		if ptr.Deref(getTrainJob(t, tj).Spec.Suspend, false) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
	pod := replicatedJob(jobSetOf(t, tj), "node").Template.Spec.Template.Spec
	if !slices.ContainsFunc(pod.Tolerations, func(t corev1.Toleration) bool { return t.MatchToleration(&mine) }) {
		t.Errorf("pods start with tolerations %v: the user's %v, edited while the quota was reserved, was dropped", pod.Tolerations, mine)
	}
	if pod.NodeSelector["disk"] != "ssd" || pod.NodeSelector["pool"] != "gpu" {
		t.Errorf("pods start with nodeSelector %v, want the user's disk=ssd and the flavor's pool=gpu", pod.NodeSelector)
	}
}
