package integration

import (
	"context"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/kueue/pkg/controller/constants"
)

// jobsOfPriorityClass: the jobs whose priority-class label names a
// WorkloadPriorityClass just created.
func (r *Reconciler) jobsOfPriorityClass(ctx context.Context, o client.Object) []reconcile.Request {
	var jobs trainjob.TrainJobList
	if err := r.deps.client.List(ctx, &jobs, client.MatchingLabels{constants.WorkloadPriorityClassLabel: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing TrainJobs of a WorkloadPriorityClass", "workloadPriorityClass", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(jobs.Items))
	for i := range jobs.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&jobs.Items[i])})
	}
	return reqs
}
