package priorityboost

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// policyChanged passes a ClusterQueue whose preemption-cost policy came
// or changed.
func policyChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return e.Object.GetAnnotations()[names.PreemptionCostAnnotation] != "" },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetAnnotations()[names.PreemptionCostAnnotation] != e.ObjectNew.GetAnnotations()[names.PreemptionCostAnnotation]
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// SetupWithManager watches TrainJobs (their progress and phase), their
// Workloads (preemptions, admission, the boost itself) and ClusterQueues'
// policies.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if !r.opts.GateOn {
		mgr.GetLogger().Info("Kueue's PriorityBoost feature gate is off: ClusterQueue preemption-cost policies are inactive", "annotation", names.PreemptionCostAnnotation)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("trainjob-priority-boost").
		For(&trainjob.TrainJob{}).
		Watches(&kueue.Workload{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &trainjob.TrainJob{}, handler.OnlyControllerOwner())).
		Watches(&kueue.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(r.jobsOf), builder.WithPredicates(policyChanged())).
		Complete(r)
}

// SetupWithManager watches ClusterQueues' policies.
func (w *Warner) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterqueue-preemption-cost").
		For(&kueue.ClusterQueue{}, builder.WithPredicates(policyChanged())).
		Complete(w)
}

// jobsOf are the TrainJobs whose Workloads are queued in or admitted to
// ClusterQueue o: its policy changed.
func (r *Reconciler) jobsOf(ctx context.Context, o client.Object) []reconcile.Request {
	var wls kueue.WorkloadList
	if err := r.opts.Client.List(ctx, &wls); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Workloads of a ClusterQueue", "clusterQueue", o.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for i := range wls.Items {
		wl := &wls.Items[i]
		owner := trainjob.OwnerOf(wl)
		if owner == "" {
			continue
		}
		cq, err := clusterQueueOf(ctx, r.opts.Client, wl)
		if err != nil || cq == nil || cq.Name != o.GetName() {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: wl.Namespace, Name: owner}})
	}
	return reqs
}
