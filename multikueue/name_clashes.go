package multikueue

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// NameClashes is a worker cluster's side of MultiKueue: it watches the
// Workloads MultiKueue creates here for TrainJobs, and holds one (see
// holdDispatched) while a TrainJob of its job's name that MultiKueue did
// not make for it is in the way, so it neither keeps quota here for a job
// that cannot start nor waits admitted forever; the hold is released once
// that TrainJob is gone. The TrainJob in the way is never written: it is
// someone else's.
type NameClashes struct {
	client   client.Client
	recorder events.EventRecorder
	now      func() time.Time
}

// NewNameClashes makes the worker side's controller.
func NewNameClashes(c client.Client, recorder events.EventRecorder) *NameClashes {
	return &NameClashes{client: c, recorder: recorder, now: time.Now}
}

// Reconcile decides for one Workload MultiKueue dispatched here.
func (d *NameClashes) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wl := &kueue.Workload{}
	if err := d.client.Get(ctx, req.NamespacedName, wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	name, ok := jobworkload.JobName(wl)
	if !ok || finished(wl) || wl.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	job := &trainjob.TrainJob{}
	if err := d.client.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: name}, job); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading TrainJob %s/%s of dispatched Workload %s: %w", wl.Namespace, name, wl.Name, err)
		}
		job = nil
	}
	why, h := nameTaken(wl, job), held(wl)
	switch {
	case why != "" && (h == nil || h.Message != why || workload.HasQuotaReservation(wl)):
		if err := hold(ctx, d.client, wl, ReasonNameTakenOnWorker, why, d.now()); err != nil {
			return ctrl.Result{}, ignoreConflict(err)
		}
		d.recorder.Eventf(wl, job, corev1.EventTypeWarning, ReasonNameTakenOnWorker, actionQueue, "%s", why)
	case why == "" && h != nil && h.Reason == ReasonNameTakenOnWorker:
		msg := fmt.Sprintf("no TrainJob %s/%s is in the way any more: Workload %s is queued here again", wl.Namespace, name, wl.Name)
		if err := release(ctx, d.client, wl, msg, d.now()); err != nil {
			return ctrl.Result{}, ignoreConflict(err)
		}
		d.recorder.Eventf(wl, nil, corev1.EventTypeNormal, ReasonHoldReleased, actionQueue, "%s", msg)
	}
	return ctrl.Result{}, nil
}

// ignoreConflict: a Workload changed since it was read brings its own
// reconcile, which decides again.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// SetupWithManager watches the Workloads MultiKueue creates here, and the
// TrainJobs that come and go under their jobs' names.
func (d *NameClashes) SetupWithManager(mgr ctrl.Manager) error {
	dispatched := predicate.NewPredicateFuncs(func(o client.Object) bool {
		wl, ok := o.(*kueue.Workload)
		if !ok {
			return false
		}
		_, ok = jobworkload.JobName(wl)
		return ok
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("multikueue-name-clashes").
		For(&kueue.Workload{}, builder.WithPredicates(dispatched)).
		Watches(&trainjob.TrainJob{}, handler.EnqueueRequestsFromMapFunc(d.workloadsNamedFor),
			builder.WithPredicates(predicate.Funcs{
				// A job comes or goes, or is marked for another Workload.
				UpdateFunc: func(e event.UpdateEvent) bool {
					return jobframework.PrebuiltWorkloadNameFor(e.ObjectOld) != jobframework.PrebuiltWorkloadNameFor(e.ObjectNew) ||
						(e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
				},
			})).
		Complete(d)
}

// workloadsNamedFor are the Workloads MultiKueue dispatched here for a job
// of o's name.
func (d *NameClashes) workloadsNamedFor(ctx context.Context, o client.Object) []reconcile.Request {
	var wls kueue.WorkloadList
	if err := d.client.List(ctx, &wls, client.InNamespace(o.GetNamespace()), client.HasLabels{kueue.MultiKueueOriginLabel}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing dispatched Workloads", "namespace", o.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for i := range wls.Items {
		if name, ok := jobworkload.JobName(&wls.Items[i]); ok && name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&wls.Items[i])})
		}
	}
	return out
}
