package integration

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	r.deps.speak(job, warning(reason, actionQueue, msg).once(job.UID))
	return ctrl.Result{RequeueAfter: missingReferenceRetry}, true
}
