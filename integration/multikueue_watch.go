package integration

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// checkComesOrGoes passes an AdmissionCheck's creation and deletion only:
// a dispatched job whose check was deleted is told so at once (not at its
// Workload's next change), and looked at again when the check is back.
var checkComesOrGoes = predicate.Funcs{
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// jobsOfAdmissionCheck are the TrainJobs whose Workloads name the check.
// Checks come and go rarely; the Workloads are read from the cache
// without copies.
func (r *Reconciler) jobsOfAdmissionCheck(ctx context.Context, o client.Object) []reconcile.Request {
	var wls kueue.WorkloadList
	if err := r.deps.client.List(ctx, &wls, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Workloads of an AdmissionCheck", "admissionCheck", o.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for i := range wls.Items {
		wl := &wls.Items[i]
		owner := metav1.GetControllerOf(wl)
		if owner == nil || owner.Kind != trainer.TrainJobKind || owner.APIVersion != trainer.GroupVersion.String() {
			continue
		}
		if !slices.ContainsFunc(wl.Status.AdmissionChecks, func(s kueue.AdmissionCheckState) bool { return string(s.Name) == o.GetName() }) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: wl.Namespace, Name: owner.Name}})
	}
	return reqs
}
