package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func job(mutate ...func(*trainjob.TrainJob)) *trainjob.TrainJob {
	j := &trainjob.TrainJob{}
	j.Namespace, j.Name, j.UID = "team", "llm", "uid-1"
	j.Labels = map[string]string{constants.QueueLabel: "research"}
	j.Spec.Suspend = ptr.To(true)
	for _, m := range mutate {
		m(j)
	}
	return j
}

func started(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(false) }

func trainerSays(typ string, msg string) func(*trainjob.TrainJob) {
	return func(j *trainjob.TrainJob) {
		apimeta.SetStatusCondition(&j.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "r", Message: msg})
	}
}

func workload(mutate ...func(*kueue.Workload)) *kueue.Workload {
	wl := &kueue.Workload{}
	wl.Namespace, wl.Name = "team", "trainjob-llm-1"
	wl.Spec.QueueName = "research"
	for _, m := range mutate {
		m(wl)
	}
	return wl
}

func cond(typ string, status metav1.ConditionStatus, reason, msg string) func(*kueue.Workload) {
	return func(wl *kueue.Workload) {
		apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
	}
}

func reserved(wl *kueue.Workload) {
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus"}
	cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, "QuotaReserved", "")(wl)
}

func admitted(wl *kueue.Workload) {
	reserved(wl)
	cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "Admitted", "")(wl)
}

func inactive(annotations map[string]string) func(*kueue.Workload) {
	return func(wl *kueue.Workload) { wl.Spec.Active = ptr.To(false); wl.Annotations = annotations }
}

func preemptedOnce(wl *kueue.Workload) {
	wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{{Reason: kueue.WorkloadEvictedByPreemption, Count: 1}}}
}

// stateCases hold a case for every State (TestEveryStateHasACase).
var stateCases = []struct {
	name string
	in   Observed
	want Status
}{
	{"no queue name", Observed{Job: job(func(j *trainjob.TrainJob) { j.Labels = nil })},
		Status{State: NotQueued, Reason: ReasonNoQueueName}},
	{"managed by another controller", Observed{Job: job(func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To("example.com/other") })},
		Status{State: NotQueued, Reason: ReasonManagedElsewhere, LocalQueue: "research"}},
	{"unlabelled, Kueue manages jobs without a queue name", Observed{Job: job(func(j *trainjob.TrainJob) { j.Labels = nil }), ManageJobsWithoutQueueName: true},
		Status{State: Queued, Reason: ReasonNoWorkloadYet}},
	{"no Workload yet", Observed{Job: job()}, Status{State: Queued, Reason: ReasonNoWorkloadYet, LocalQueue: "research"}},
	{"pending", Observed{Job: job(), Workload: workload(cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, "Pending", "couldn't assign flavors"))},
		Status{State: Queued, Reason: ReasonPending, LocalQueue: "research"}},
	{"evicted and stopped: requeued", Observed{Job: job(), Workload: workload(preemptedOnce, cond(kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByPreemption, "Preempted to accommodate a workload"))},
		Status{State: Requeued, Reason: kueue.WorkloadEvictedByPreemption, LocalQueue: "research"}},
	{"preempted before, pending again", Observed{Job: job(), Workload: workload(preemptedOnce)},
		Status{State: Requeued, Reason: kueue.WorkloadEvictedByPreemption, LocalQueue: "research"}},
	{"held for its runtime", Observed{Job: job(), Workload: workload(inactive(map[string]string{names.HeldForRuntimeAnnotation: "ClusterTrainingRuntime torch"}))},
		Status{State: WaitingForRuntime, Reason: ReasonRuntimeHold, LocalQueue: "research"}},
	{"held by a policy", Observed{Job: job(), Workload: workload(inactive(map[string]string{names.HeldByPolicyAnnotation: `{"policy":"no-gpus","since":"2026-12-01T00:00:00Z","attempt":2}`}))},
		Status{State: HeldByPolicy, Reason: ReasonPolicyHold, LocalQueue: "research"}},
	{"held on a MultiKueue worker", Observed{Job: job(), Workload: workload(cond(kueue.WorkloadRequeued, metav1.ConditionFalse, ReasonNameTakenOnWorker, "a TrainJob team/llm is in the way"))},
		Status{State: HeldOnWorker, Reason: ReasonNameTakenOnWorker, LocalQueue: "research"}},
	{"a Requeued false of Kueue's own is no hold", Observed{Job: job(), Workload: workload(cond(kueue.WorkloadRequeued, metav1.ConditionFalse, "BackoffExceeded", ""))},
		Status{State: Queued, Reason: ReasonPending, LocalQueue: "research"}},
	{"deactivated by someone else", Observed{Job: job(), Workload: workload(inactive(nil))},
		Status{State: Inactive, Reason: ReasonDeactivated, LocalQueue: "research"}},
	{"quota reserved, checks pending", Observed{Job: job(), Workload: workload(reserved)},
		Status{State: QuotaReserved, Reason: ReasonChecksPending, LocalQueue: "research", ClusterQueue: "gpus"}},
	{"admitted, not started", Observed{Job: job(), Workload: workload(admitted)},
		Status{State: Admitted, Reason: ReasonAdmitted, LocalQueue: "research", ClusterQueue: "gpus"}},
	{"running", Observed{Job: job(started), Workload: workload(admitted)},
		Status{State: Running, Reason: ReasonStarted, LocalQueue: "research", ClusterQueue: "gpus"}},
	{"started while its Workload holds no admission", Observed{Job: job(started), Workload: workload()},
		Status{State: Running, Reason: ReasonRunningUnadmitted, LocalQueue: "research"}},
	{"dispatched, running on a worker", Observed{Job: job(func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName) }),
		Workload: workload(admitted, func(wl *kueue.Workload) { wl.Status.ClusterName = ptr.To("worker1") })},
		Status{State: Running, Reason: ReasonOnWorker, LocalQueue: "research", ClusterQueue: "gpus", Worker: "worker1"}},
	{"evicted while running", Observed{Job: job(started), Workload: workload(admitted, cond(kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByPodsReadyTimeout, "Exceeded the PodsReady timeout"))},
		Status{State: Evicted, Reason: kueue.WorkloadEvictedByPodsReadyTimeout, LocalQueue: "research", ClusterQueue: "gpus"}},
	{"Trainer says complete", Observed{Job: job(started, trainerSays(trainer.TrainJobComplete, "done")), Workload: workload(admitted)},
		Status{State: Finished, Reason: string(Finished), LocalQueue: "research"}},
	{"Kueue says finished, Trainer not yet", Observed{Job: job(started), Workload: workload(admitted, cond(kueue.WorkloadFinished, metav1.ConditionTrue, kueue.WorkloadFinishedReasonSucceeded, ""))},
		Status{State: Finished, Reason: string(Finished), LocalQueue: "research", ClusterQueue: "gpus"}},
	{"Trainer says failed, while its Workload is held", Observed{Job: job(trainerSays(trainer.TrainJobFailed, "OOM")), Workload: workload(inactive(nil))},
		Status{State: Failed, Reason: string(Failed), LocalQueue: "research"}},
	{"Kueue says failed", Observed{Job: job(started), Workload: workload(admitted, cond(kueue.WorkloadFinished, metav1.ConditionTrue, kueue.WorkloadFinishedReasonFailed, "x"))},
		Status{State: Failed, Reason: string(Failed), LocalQueue: "research", ClusterQueue: "gpus"}},
}

func TestOf(t *testing.T) {
	for _, tc := range stateCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Of(tc.in)
			if got.Message == "" {
				t.Error("no message")
			}
			got.Message, got.Detail = "", "" // the readers' tests read them
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
		})
	}
}

// A new State gets a case here before it gets a reader.
func TestEveryStateHasACase(t *testing.T) {
	covered := map[State]bool{}
	for _, tc := range stateCases {
		covered[tc.want.State] = true
	}
	if missing := Unmapped(func(s State) bool { return covered[s] }); len(missing) > 0 {
		t.Errorf("states without a case: %v", missing)
	}
	if got := Unmapped(func(State) bool { return false }); len(got) != len(States()) {
		t.Errorf("Unmapped of an empty table: %v, want every state", got)
	}
}

func TestStatesAreDistinctWords(t *testing.T) {
	seen := map[State]bool{}
	for _, s := range States() {
		if seen[s] || s == "" {
			t.Errorf("state %q twice or empty", s)
		}
		seen[s] = true
	}
}

// A preempted job in its notice says until when, while its Workload holds
// its quota; once it stopped, its notice is history.
func TestAJobInItsPreemptionNoticeSaysUntilWhen(t *testing.T) {
	since := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	evicted := func(wl *kueue.Workload) {
		apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue,
			Reason: kueue.WorkloadEvictedByPreemption, Message: "Preempted to accommodate a workload", LastTransitionTime: metav1.NewTime(since)})
		n, _ := preemptcost.NoticeOf(wl, 2*time.Minute)
		wl.Annotations = map[string]string{names.PreemptingAnnotation: n.Value()}
	}
	st := Of(Observed{Job: job(started), Workload: workload(admitted, evicted)})
	if st.State != Evicted || !st.NoticeUntil.Equal(since.Add(2*time.Minute)) || !strings.Contains(st.Message, "preemption notice until 2026-12-07T10:02:00Z") ||
		!strings.Contains(st.Detail, "notice until 2026-12-07T10:02:00Z") {
		t.Errorf("Of = %+v; want Evicted, in its notice until 10:02:00 said", st)
	}
	stopped := Of(Observed{Job: job(), Workload: workload(evicted)})
	if !stopped.NoticeUntil.IsZero() || strings.Contains(stopped.Message, "notice") {
		t.Errorf("after its stop: %+v; want no notice said", stopped)
	}
}
