package integration

import (
	"context"
	"sync"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// With waitForPodsReady, Kueue's job framework writes a Workload's
// PodsReady condition at the job's first reconcile (False, WaitForStart)
// and again once its pods are ready (True, Started). The first says
// nothing Kueue does not assume already: Kueue reads a Workload without the
// condition as waiting for its pods — its PodsReady timeout counts from
// the admission for an absent condition as for WaitForStart (the workload
// controller's admittedNotReadyWorkload), and blockAdmission counts any
// admitted Workload whose condition is not True (Kueue v0.16 to v0.19
// alike). That write was one of the eight requests per job at N = 500,
// and the reconciles its event woke, in Kueue and in us
// (docs/benchmark.md).
//
// So until a job's pods are ready for the first time, its reconciles run
// without the job framework's PodsReady step; the reconcile that finds them
// ready marks the job, and the next one runs with the step and writes
// Started, through the job framework as ever (its metrics with it). A
// Workload that has the condition — it started before, was evicted, or
// waits for recovery — is left to the job framework, which resets or
// moves it.

// podsReadyUnwritten: the job framework need not write PodsReady for job
// yet: it runs here, and its Workload, as the cache has it, exists without
// the condition and is neither finished nor being deleted.
func podsReadyUnwritten(job *trainjob.TrainJob, wl *kueue.Workload) bool {
	return job != nil && wl != nil && job.Runner() == trainjob.RunLocally && job.DeletionTimestamp.IsZero() &&
		wl.DeletionTimestamp.IsZero() && !workloadFinished(wl) &&
		apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady) == nil
}

// readyUnreported: after a reconcile without the PodsReady step, the job's
// pods are ready under Kueue's admission with no PodsReady condition
// written: what the job framework writes Started for.
func (t *TrainJob) readyUnreported(ctx context.Context) bool {
	if t.obs == nil || t.readErr != nil || t.obs.runner != trainjob.RunLocally {
		return false
	}
	wl := t.obs.workload
	return wl != nil && workload.IsAdmitted(wl) && !workloadFinished(wl) &&
		apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady) == nil &&
		!t.IsSuspended() && t.PodsReady(ctx, nil)
}

// readyToReport holds the jobs whose next reconcile runs with the PodsReady
// step, marked by the reconcile that found their pods ready. Losing a mark
// in a restart loses nothing: the next reconcile finds the pods ready and
// marks the job again.
type readyToReport struct {
	mu   sync.Mutex
	jobs map[types.NamespacedName]struct{}
}

func (r *readyToReport) mark(job types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs == nil {
		r.jobs = map[types.NamespacedName]struct{}{}
	}
	r.jobs[job] = struct{}{}
}

// take reports whether job was marked, and unmarks it.
func (r *readyToReport) take(job types.NamespacedName) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.jobs[job]
	delete(r.jobs, job)
	return ok
}
