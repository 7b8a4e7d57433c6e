package priorityboost

import (
	"context"
	"fmt"

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
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &kueue.Workload{}, queueIndex, queueOfWorkload); err != nil {
		return fmt.Errorf("indexing Workloads by queue: %w", err)
	}
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

// queueIndex indexes TrainJobs' Workloads by where they queue, as
// clusterQueueOf reads it: "cq/<name>" once admitted to a ClusterQueue,
// else "lq/<namespace>/<name>" of their LocalQueue.
const queueIndex = "trainjob-kueue.dev/queue"

func queueOfWorkload(o client.Object) []string {
	wl, ok := o.(*kueue.Workload)
	if !ok || trainjob.OwnerOf(wl) == "" {
		return nil
	}
	switch {
	case wl.Status.Admission != nil:
		return []string{"cq/" + string(wl.Status.Admission.ClusterQueue)}
	case wl.Spec.QueueName != "":
		return []string{"lq/" + wl.Namespace + "/" + string(wl.Spec.QueueName)}
	}
	return nil
}

// jobsOf are the TrainJobs whose Workloads are queued in or admitted to
// ClusterQueue o: its policy changed. From the cache's index, the
// ClusterQueue's own Workloads only, not every Workload of the cluster.
func (r *Reconciler) jobsOf(ctx context.Context, o client.Object) []reconcile.Request {
	keys := []string{"cq/" + o.GetName()}
	var lqs kueue.LocalQueueList
	if err := r.opts.Client.List(ctx, &lqs); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the LocalQueues of a ClusterQueue", "clusterQueue", o.GetName())
		return nil
	}
	for _, lq := range lqs.Items {
		if string(lq.Spec.ClusterQueue) == o.GetName() {
			keys = append(keys, "lq/"+lq.Namespace+"/"+lq.Name)
		}
	}
	var reqs []reconcile.Request
	for _, key := range keys {
		var wls kueue.WorkloadList
		if err := r.opts.Client.List(ctx, &wls, client.MatchingFields{queueIndex: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the Workloads of a ClusterQueue", "clusterQueue", o.GetName())
			return nil
		}
		for i := range wls.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: wls.Items[i].Namespace, Name: trainjob.OwnerOf(&wls.Items[i])}})
		}
	}
	return reqs
}
