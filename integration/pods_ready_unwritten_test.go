package integration

import (
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// With waitForPodsReady, a job's Workload gets no PodsReady condition
// while it queues and while its pods start — Kueue reads none as
// WaitForStart — and Started once they are ready: one status write where
// the job framework made two. The reconcile that finds the pods ready asks
// for the next at once, ahead of the queue, and that one writes Started.
func TestTheWorkloadHasNoPodsReadyConditionUntilItsPodsAre(t *testing.T) {
	job := queuedJob("ns")
	c, reconcile := podsReadyWorld(t, job)
	workload := func() *kueue.Workload { return theWorkload(t, c) }
	podsReady := func() *metav1.Condition {
		t.Helper()
		return apimeta.FindStatusCondition(workload().Status.Conditions, kueue.WorkloadPodsReady)
	}

	reconcile() // the job's Workload
	reconcile() // queued
	if cond := podsReady(); cond != nil {
		t.Fatalf("PodsReady while the job queues: %+v, want none", cond)
	}
	admit(t, c, workload())
	reconcile() // the start
	if got := stored(t, c, job); got.Suspended() {
		t.Fatal("the admitted job was not started")
	}
	reconcile()
	if cond := podsReady(); cond != nil {
		t.Fatalf("PodsReady while the job's pods start: %+v, want none", cond)
	}

	running := stored(t, c, job)
	running.Status.JobsStatus = []trainer.JobStatus{{Name: "node", Ready: ptr.To[int32](1), Active: ptr.To[int32](1)}}
	if err := c.Status().Update(t.Context(), running); err != nil {
		t.Fatal(err)
	}
	res := reconcile()
	if res.RequeueAfter <= 0 || ptr.Deref(res.Priority, 0) != decisionPriority {
		t.Errorf("the reconcile that found the pods ready asked for %+v, want the next at once at priority %d", res, decisionPriority)
	}
	reconcile()
	if cond := podsReady(); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != kueue.WorkloadStarted {
		t.Errorf("PodsReady once the pods are ready: %+v, want True, %s", cond, kueue.WorkloadStarted)
	}
	if res := reconcile(); res.RequeueAfter != 0 {
		t.Errorf("a reconcile after Started asked for another: %+v", res)
	}
}

// The PodsReady step is left out only where the job framework would write
// the condition for the first time: a Workload that has one (started
// before, evicted, waiting for recovery) is the job framework's to reset
// or move.
func TestPodsReadyUnwritten(t *testing.T) {
	admitted := []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
	with := func(extra ...metav1.Condition) []metav1.Condition {
		return append(append([]metav1.Condition{}, admitted...), extra...)
	}
	running := func(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(false) }
	for name, tc := range map[string]struct {
		job   func(*trainjob.TrainJob)
		conds []metav1.Condition
		none  bool
		want  bool
	}{
		"queued":                        {want: true},
		"admitted, its pods starting":   {conds: admitted, job: running, want: true},
		"no Workload yet":               {none: true},
		"waiting for its pods, written": {conds: with(metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionFalse, Reason: kueue.WorkloadWaitForStart}), job: running},
		"started":                       {conds: with(metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue, Reason: kueue.WorkloadStarted}), job: running},
		"evicted after it started":      {conds: []metav1.Condition{{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue, Reason: kueue.WorkloadStarted}}},
		"finished":                      {conds: with(metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue})},
		"dispatched by MultiKueue":      {job: func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(trainjob.MultiKueueControllerName) }},
		"the job being deleted":         {job: func(j *trainjob.TrainJob) { j.DeletionTimestamp = ptr.To(metav1.Now()); j.Finalizers = []string{"f"} }},
	} {
		t.Run(name, func(t *testing.T) {
			job, wl := cachedPair(t, tc.job, tc.conds, tc.none)
			if got := podsReadyUnwritten(job, wl); got != tc.want {
				t.Errorf("podsReadyUnwritten = %v, want %v", got, tc.want)
			}
		})
	}
}

// A mark is taken once.
func TestReadyToReportIsTakenOnce(t *testing.T) {
	var r readyToReport
	job := client.ObjectKey{Namespace: "ns", Name: "j"}
	if r.take(job) {
		t.Fatal("an unmarked job was taken")
	}
	r.mark(job)
	if !r.take(job) {
		t.Fatal("a marked job was not taken")
	}
	if r.take(job) {
		t.Fatal("a mark was taken twice")
	}
}
