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
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
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
// policies. On a cluster where no ClusterQueue has a policy the jobs' and
// Workloads' changes are not even queued (policyInForce): the controller
// has nothing to do there but take back a boost of ours, which a Workload
// carrying one still brings.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &kueue.Workload{}, queueIndex, queueOfWorkload); err != nil {
		return fmt.Errorf("indexing Workloads by queue: %w", err)
	}
	if !r.opts.GateOn {
		mgr.GetLogger().Info("Kueue's PriorityBoost feature gate is off: ClusterQueue preemption-cost policies are inactive", "annotation", names.PreemptionCostAnnotation)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("trainjob-priority-boost").
		For(&trainjob.TrainJob{}, builder.WithPredicates(r.whileInForce())).
		Watches(&kueue.Workload{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &trainjob.TrainJob{}, handler.OnlyControllerOwner()),
			builder.WithPredicates(r.whileInForceOrOurs())).
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

// whileInForce passes a TrainJob's events while some ClusterQueue has a
// policy.
func (r *Reconciler) whileInForce() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(client.Object) bool { return r.policyInForce() })
}

// whileInForceOrOurs passes a Workload's events while some ClusterQueue has
// a policy, and always those of a Workload with our boost: it is taken back
// once no policy asks for it.
func (r *Reconciler) whileInForceOrOurs() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		wl, ok := o.(*kueue.Workload)
		return ok && (preemptcost.Marked(wl) || r.policyInForce())
	})
}

// policyInForce: some ClusterQueue has a preemption-cost policy (usable or
// not: the reconcile tells). From the cache, without copies; the cache's
// first read waits for its ClusterQueues, so no job's event is dropped
// before they are known. A policy that comes later brings its
// ClusterQueue's jobs (jobsOf).
func (r *Reconciler) policyInForce() bool {
	var cqs kueue.ClusterQueueList
	if err := r.opts.Client.List(context.Background(), &cqs, client.UnsafeDisableDeepCopy); err != nil {
		return true // can't tell: the reconcile reads again
	}
	for i := range cqs.Items {
		if _, ok := cqs.Items[i].Annotations[names.PreemptionCostAnnotation]; ok {
			return true
		}
	}
	return false
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
