package integration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
)

// Who runs a TrainJob, by its spec.managedBy.
type runner int

const (
	// runLocally: Trainer's controller runs the job here; we queue it and
	// start it on admission.
	runLocally runner = iota
	// runRemotely: MultiKueue dispatches the job to a worker cluster. Here it
	// gets its Workload and nothing else: it is never unsuspended, injected
	// or otherwise written, so even a Trainer that ignores managedBy (before
	// v2.3) has nothing to run.
	runRemotely
	// runElsewhere: another controller owns the job altogether.
	runElsewhere
)

func runnerOf(managedBy *string) runner {
	switch ptr.Deref(managedBy, ControllerName) {
	case ControllerName:
		return runLocally
	case kueue.MultiKueueControllerName:
		return runRemotely
	default:
		return runElsewhere
	}
}

// dispatch is what a job's Workload says of MultiKueue's dispatching.
type dispatch struct {
	// check: the Workload has a MultiKueue admission check.
	check bool
	// lostChecks name the Workload's admission checks whose AdmissionCheck
	// no longer exists: which controller they were is unknown, so a job for
	// MultiKueue is taken to stay where it was dispatched.
	lostChecks []string
}

// runsRemotely: the job's Workload is admitted and dispatched, so a worker
// cluster runs the job. That is what "unsuspended" means for a dispatched
// job: the job framework then leaves it alone instead of starting it here.
// The check's state does not matter: admitted means it was Ready, and when
// MultiKueue sends it back to Retry (a lost worker) the job runs remotely
// until Kueue evicts the Workload. A check whose AdmissionCheck was deleted
// keeps the job where it is: finishing its Workload would have MultiKueue
// delete the worker's copy, and the training running there with it.
func (o *observed) runsRemotely() bool {
	wl := o.workload
	if wl == nil || !workload.IsAdmitted(wl) || workloadFinished(wl) {
		return false
	}
	return o.dispatch.check || len(o.dispatch.lostChecks) > 0
}

// dispatchOf reads the Workload's admission checks from the cache.
func (d *deps) dispatchOf(ctx context.Context, wl *kueue.Workload) (dispatch, error) {
	var out dispatch
	if wl == nil {
		return out, nil
	}
	for i := range wl.Status.AdmissionChecks {
		name := wl.Status.AdmissionChecks[i].Name
		ac := &kueue.AdmissionCheck{}
		if err := d.client.Get(ctx, client.ObjectKey{Name: string(name)}, ac); err != nil {
			if client.IgnoreNotFound(err) == nil {
				out.lostChecks = append(out.lostChecks, string(name))
				continue
			}
			return dispatch{}, fmt.Errorf("reading AdmissionCheck %s: %w", name, err)
		}
		if ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			out.check = true
		}
	}
	return out, nil
}

// QueueRoute is what a LocalQueue leads to: its ClusterQueue and that
// queue's MultiKueue admission check, if any.
type QueueRoute struct {
	LocalQueue   string
	ClusterQueue string
	// Found is false when the LocalQueue or its ClusterQueue does not exist
	// (yet): then nothing can be said about dispatching.
	Found bool
	// MultiKueueCheck names the ClusterQueue's MultiKueue admission check.
	MultiKueueCheck string
}

// routeOf follows a LocalQueue to its ClusterQueue's admission checks, all
// from the informer cache: our process has no Kueue queue manager to ask.
func routeOf(ctx context.Context, c client.Reader, namespace, localQueue string) (QueueRoute, error) {
	r := QueueRoute{LocalQueue: localQueue}
	lq := &kueue.LocalQueue{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: localQueue}, lq); err != nil {
		return r, client.IgnoreNotFound(err)
	}
	r.ClusterQueue = string(lq.Spec.ClusterQueue)
	cq := &kueue.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKey{Name: r.ClusterQueue}, cq); err != nil {
		return r, client.IgnoreNotFound(err)
	}
	r.Found = true
	for _, name := range AdmissionChecksOf(cq) {
		ac := &kueue.AdmissionCheck{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, ac); err != nil {
			if client.IgnoreNotFound(err) == nil {
				continue
			}
			return r, err
		}
		if ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			r.MultiKueueCheck = name
			break
		}
	}
	return r, nil
}

// AdmissionChecksOf lists the admission checks a ClusterQueue applies.
func AdmissionChecksOf(cq *kueue.ClusterQueue) []string {
	if cq.Spec.AdmissionChecksStrategy == nil {
		return nil
	}
	out := make([]string, 0, len(cq.Spec.AdmissionChecksStrategy.AdmissionChecks))
	for _, r := range cq.Spec.AdmissionChecksStrategy.AdmissionChecks {
		out = append(out, string(r.Name))
	}
	return out
}

// refuseLocalRun answers the job framework's start of a dispatched job. It
// only gets here when the framework saw the Workload admitted and we did
// not see it admitted through a MultiKueue check: either the Workload
// changed between the framework's read and ours (it was evicted meanwhile),
// or the ClusterQueue admitted it with no MultiKueue check at all. Starting
// it here would break the promise of spec.managedBy. The first is retried:
// an error, not a nil that would make the framework record a start and
// send a patch. The second is permanent: the framework finishes the
// Workload, so its quota goes back, with our event saying why.
func (t *TrainJob) refuseLocalRun() error {
	wl := t.obs.workload
	if wl != nil && (t.obs.dispatch.check || len(t.obs.dispatch.lostChecks) > 0) {
		return fmt.Errorf("the Workload of TrainJob %s/%s changed while it was read; retrying", t.Namespace, t.Name)
	}
	cq := "(unknown)"
	if wl != nil && wl.Status.Admission != nil {
		cq = string(wl.Status.Admission.ClusterQueue)
	}
	msg := fmt.Sprintf("spec.managedBy is %s, but ClusterQueue %s admitted the job without a MultiKueue admission check: no worker cluster will run it, and this cluster must not. The job is not started; recreate it on a queue whose ClusterQueue has a MultiKueue admission check, or without spec.managedBy to run it here", kueue.MultiKueueControllerName, cq)
	if t.deps.said.first(workloadUID(wl), ReasonNoMultiKueueCheck) {
		t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonNoMultiKueueCheck, actionStart, "%s", msg)
	}
	return permanentRefusal(ReasonNoMultiKueueCheck, msg)
}

// defaultManagedBy hands a job to MultiKueue when its queue dispatches, as
// Kueue does for its built-in integrations: only when the user left
// spec.managedBy unset or at Trainer's default.
func (w *Webhook) defaultManagedBy(ctx context.Context, job *TrainJob) error {
	if !w.opts.MultiKueue || !job.CanDefaultManagedBy() {
		return nil
	}
	q := jobframework.QueueName(job)
	if q == "" {
		return nil
	}
	route, err := routeOf(ctx, w.client, job.Namespace, string(q))
	if err != nil {
		return fmt.Errorf("looking up LocalQueue %s/%s: %w", job.Namespace, q, err)
	}
	if route.MultiKueueCheck != "" {
		job.SetManagedBy(ptr.To(kueue.MultiKueueControllerName))
	}
	return nil
}

// validateDispatch refuses the combinations that would leave a job queued
// for ever: a job for MultiKueue on a queue that does not dispatch (or with
// no queue at all), and any job on a dispatching queue when Kueue here is
// not configured to dispatch TrainJobs. A queue that does not exist yet is
// no error: Kueue keeps the job pending until it does.
func (w *Webhook) validateDispatch(ctx context.Context, job *TrainJob) (field.ErrorList, error) {
	managedBy := field.NewPath("spec", "managedBy")
	queueLabel := field.NewPath("metadata", "labels").Key(constants.QueueLabel)
	remote := runnerOf(job.Spec.ManagedBy) == runRemotely
	q := jobframework.QueueName(job)
	if q == "" {
		if remote && !w.opts.ManageJobsWithoutQueueName {
			return field.ErrorList{field.Invalid(managedBy, kueue.MultiKueueControllerName,
				fmt.Sprintf("a TrainJob handed to MultiKueue must be queued: set the %s label to a LocalQueue whose ClusterQueue has a MultiKueue admission check, or drop spec.managedBy to run the job on this cluster", constants.QueueLabel))}, nil
		}
		return nil, nil
	}
	route, err := routeOf(ctx, w.client, job.Namespace, string(q))
	if err != nil {
		return nil, fmt.Errorf("looking up LocalQueue %s/%s: %w", job.Namespace, q, err)
	}
	if !route.Found {
		return nil, nil
	}
	switch {
	case route.MultiKueueCheck != "" && !w.opts.MultiKueue:
		return field.ErrorList{field.Invalid(queueLabel, string(q),
			fmt.Sprintf("ClusterQueue %s dispatches to worker clusters (MultiKueue admission check %s), but the Kueue configuration trainjob-kueue runs with does not let MultiKueue dispatch TrainJobs: add {name: %s} to multiKueue.externalFrameworks (with the MultiKueue and MultiKueueAdaptersForCustomJobs feature gates on) in Kueue's and trainjob-kueue's configuration, or use a queue without a MultiKueue check", route.ClusterQueue, route.MultiKueueCheck, discovery.TrainJobExternalFramework))}, nil
	case remote && route.MultiKueueCheck == "":
		return field.ErrorList{field.Invalid(managedBy, kueue.MultiKueueControllerName,
			fmt.Sprintf("LocalQueue %s leads to ClusterQueue %s, which has no MultiKueue admission check: no worker cluster would ever run this job, and this cluster must not. Use a queue whose ClusterQueue has a MultiKueue admission check, or drop spec.managedBy to run the job here", route.LocalQueue, route.ClusterQueue))}, nil
	case !remote && route.MultiKueueCheck != "" && runnerOf(job.Spec.ManagedBy) == runLocally:
		return field.ErrorList{field.Invalid(managedBy, ptr.Deref(job.Spec.ManagedBy, ""),
			fmt.Sprintf("ClusterQueue %s dispatches to worker clusters (MultiKueue admission check %s), which needs spec.managedBy %s, and spec.managedBy cannot change: recreate the job on this queue (with spec.managedBy unset it is set for you)", route.ClusterQueue, route.MultiKueueCheck, kueue.MultiKueueControllerName))}, nil
	}
	return nil, nil
}
