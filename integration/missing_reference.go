package integration

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// missingReferenceRetry is how often a job naming an object that does not
// exist looks again; a WorkloadPriorityClass being created is watched, so
// only a prebuilt Workload waits for it.
const missingReferenceRetry = 30 * time.Second

// missingReference turns a job's reference to an object that does not
// exist — a WorkloadPriorityClass its priority-class label names, the
// prebuilt Workload it names — into a Warning event that says which, and a
// quiet retry, instead of an error logged and retried with backoff and
// nothing anywhere telling the user why the job sits suspended.
func (r *Reconciler) missingReference(ctx context.Context, req ctrl.Request, err error) (ctrl.Result, bool) {
	prebuilt := errors.Is(err, jobframework.ErrPrebuiltWorkloadNotFound)
	if !prebuilt && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, false
	}
	job := &trainjob.TrainJob{}
	if r.deps.client.Get(ctx, req.NamespacedName, job) != nil {
		return ctrl.Result{}, false
	}
	var reason, msg string
	if prebuilt {
		reason = ReasonPrebuiltWorkloadNotFound
		msg = fmt.Sprintf("%s names Workload %s/%s, which does not exist: the job stays suspended until it does (or remove the name to have a Workload made for the job)",
			constants.PrebuiltWorkloadLabel, job.Namespace, jobframework.PrebuiltWorkloadNameFor(job))
	} else {
		name := job.Labels[constants.WorkloadPriorityClassLabel]
		if name == "" {
			return ctrl.Result{}, false
		}
		if err := r.deps.client.Get(ctx, client.ObjectKey{Name: name}, &kueue.WorkloadPriorityClass{}); !apierrors.IsNotFound(err) {
			return ctrl.Result{}, false
		}
		reason = ReasonPriorityClassNotFound
		msg = fmt.Sprintf("label %s names WorkloadPriorityClass %q, which does not exist: the job is not queued until it is created (or the label names one that exists)",
			constants.WorkloadPriorityClassLabel, name)
	}
	if r.deps.said.first(job.UID, reason) {
		r.deps.recorder.Eventf(job, nil, corev1.EventTypeWarning, reason, actionQueue, "%s", msg)
	}
	return ctrl.Result{RequeueAfter: missingReferenceRetry}, true
}

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
