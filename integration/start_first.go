package integration

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// frameworkFor is the job framework's reconciler for the reconcile of req:
// the one without the PodsReady step when that reconcile will start the job
// (startsNow), or would only write that the job's pods are not ready yet
// (podsReadyUnwritten: unwritten is then true), else the one with it.
//
// With waitForPodsReady, Kueue's job framework writes the PodsReady
// condition (WaitForStart) ahead of every other step, and ends the
// reconcile with that write. A job Kueue admitted before that first write
// (in a burst, the jobs admitted the moment they queue) was started only by
// the reconcile the write's own event woke: one more API round trip, and a
// third when that reconcile's cache had not yet seen our write and wrote
// it again. At N = 500 those were every start slower than 300 ms
// (docs/benchmark.md). Starting first loses nothing: Kueue's PodsReady
// timeout counts from the admission either way.
func (r *Reconciler) frameworkFor(ctx context.Context, req ctrl.Request) (jr *jobframework.JobReconciler, unwritten bool, err error) {
	if r.noPodsReady == nil {
		return r.jr, false, nil
	}
	if r.ready.take(req.NamespacedName) {
		return r.jr, false, nil
	}
	job, wl, err := cached(ctx, r.deps.client, req)
	if err != nil {
		return nil, false, err
	}
	if startsNow(job, wl) {
		return r.noPodsReady, false, nil
	}
	if podsReadyUnwritten(job, wl) {
		return r.noPodsReady, true, nil
	}
	return r.jr, false, nil
}

// cached is the job of req and its Workload as the cache has them; nil when
// there is none.
func cached(ctx context.Context, c client.Reader, req ctrl.Request) (*trainjob.TrainJob, *kueue.Workload, error) {
	job := &trainjob.TrainJob{}
	if err := c.Get(ctx, req.NamespacedName, job); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	wl, err := jobworkload.Of(ctx, c, job)
	return job, wl, err
}

// startsNow: job, as the cache has it, will be started by this reconcile:
// it runs here, it is suspended, and its Workload is admitted, neither
// evicted nor finished (those are stops, and go first).
func startsNow(job *trainjob.TrainJob, wl *kueue.Workload) bool {
	if job == nil || wl == nil || !job.Suspended() || job.Runner() != trainjob.RunLocally || !job.DeletionTimestamp.IsZero() {
		return false
	}
	conds := wl.Status.Conditions
	return apimeta.IsStatusConditionTrue(conds, kueue.WorkloadAdmitted) &&
		!apimeta.IsStatusConditionTrue(conds, kueue.WorkloadEvicted) &&
		!apimeta.IsStatusConditionTrue(conds, kueue.WorkloadFinished) &&
		wl.DeletionTimestamp.IsZero()
}
