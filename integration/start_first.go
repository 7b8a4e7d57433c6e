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
// the one that starts an admitted job before it writes the PodsReady
// condition, when that reconcile will start the job (startsNow), else the
// one that writes it first.
//
// With waitForPodsReady, Kueue's job framework writes the PodsReady
// condition (WaitForStart) ahead of every other step, and ends the
// reconcile with that write. A job Kueue admitted before that first write
// (in a burst, the jobs admitted the moment they queue) was started only by
// the reconcile the write's own event woke: one more API round trip, and a
// third when that reconcile's cache had not yet seen our write and wrote
// it again. At N = 500 those were every start slower than 300 ms
// (docs/benchmark.md). Starting first loses nothing: the start's own update
// wakes the job again, and that reconcile writes the condition, as an
// admitted job not yet ready; Kueue's PodsReady timeout counts from the
// admission either way.
func (r *Reconciler) frameworkFor(ctx context.Context, req ctrl.Request) (*jobframework.JobReconciler, error) {
	if r.startFirst == nil {
		return r.jr, nil
	}
	starts, err := startsNow(ctx, r.deps.client, req)
	if err != nil || !starts {
		return r.jr, err
	}
	return r.startFirst, nil
}

// startsNow: the job of req, as the cache has it, will be started by this
// reconcile: it runs here, it is suspended, and its Workload is admitted,
// neither evicted nor finished (those are stops, and go first). Reads the
// cache only.
func startsNow(ctx context.Context, c client.Reader, req ctrl.Request) (bool, error) {
	job := &trainjob.TrainJob{}
	if err := c.Get(ctx, req.NamespacedName, job); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !job.Suspended() || job.Runner() != trainjob.RunLocally || !job.DeletionTimestamp.IsZero() {
		return false, nil
	}
	wl, err := jobworkload.Of(ctx, c, job)
	if err != nil || wl == nil {
		return false, err
	}
	conds := wl.Status.Conditions
	return apimeta.IsStatusConditionTrue(conds, kueue.WorkloadAdmitted) &&
		!apimeta.IsStatusConditionTrue(conds, kueue.WorkloadEvicted) &&
		!apimeta.IsStatusConditionTrue(conds, kueue.WorkloadFinished) &&
		wl.DeletionTimestamp.IsZero(), nil
}
