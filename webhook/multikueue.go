package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// What the webhook decides for MultiKueue: a job on a dispatching queue is
// handed to MultiKueue, and the combinations that would leave a job queued
// for ever are refused.

// defaultManagedBy hands a job to MultiKueue when its queue dispatches, as
// Kueue does for its built-in integrations: only when the user left
// spec.managedBy unset or at Trainer's default.
//
// Standing by it does too, as Kueue's built-in webhook does then: in a
// switch, Kueue restarts without its built-in integration (its TrainJob
// webhook a no-op) up to one configuration tick before we restart taking
// TrainJobs over, and a job created on a dispatching queue in between
// was left with Trainer's managedBy: Kueue's MultiKueue check rejected it
// and deactivated its Workload for good (seen in the MultiKueue switch
// e2e). Both webhooks set the same value, whichever runs first.
func (w *Webhook) defaultManagedBy(ctx context.Context, job *integration.TrainJob) error {
	if !(w.opts.MultiKueue || w.opts.BuiltInTrainJob) || !job.CanDefaultManagedBy() {
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
func (w *Webhook) validateDispatch(ctx context.Context, job *integration.TrainJob) (field.ErrorList, error) {
	if w.opts.BuiltInTrainJob {
		// Standing by, Kueue's built-in integration runs the jobs with its
		// own MultiKueue adapter (which is why Kueue refuses TrainJob in
		// multiKueue.externalFrameworks then, and opts.MultiKueue is
		// false): its webhook sets spec.managedBy on a dispatching queue,
		// and judges the job as it will be run.
		return nil, nil
	}
	managedBy := field.NewPath("spec", "managedBy")
	queueLabel := field.NewPath("metadata", "labels").Key(constants.QueueLabel)
	remote := job.Runner() == trainjob.RunRemotely
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
	case !remote && route.MultiKueueCheck != "" && job.Runner() == trainjob.RunLocally:
		return field.ErrorList{field.Invalid(managedBy, ptr.Deref(job.Spec.ManagedBy, ""),
			fmt.Sprintf("ClusterQueue %s dispatches to worker clusters (MultiKueue admission check %s), which needs spec.managedBy %s, and spec.managedBy cannot change: recreate the job on this queue (with spec.managedBy unset it is set for you)", route.ClusterQueue, route.MultiKueueCheck, kueue.MultiKueueControllerName))}, nil
	}
	return nil, nil
}

// queueRoute is what a LocalQueue leads to: its ClusterQueue and that
// queue's MultiKueue admission check, if any.
type queueRoute struct {
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
func routeOf(ctx context.Context, c client.Reader, namespace, localQueue string) (queueRoute, error) {
	r := queueRoute{LocalQueue: localQueue}
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
	for _, name := range admissionChecksOf(cq) {
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

// admissionChecksOf lists the admission checks a ClusterQueue applies.
func admissionChecksOf(cq *kueue.ClusterQueue) []string {
	if cq.Spec.AdmissionChecksStrategy == nil {
		return nil
	}
	out := make([]string, 0, len(cq.Spec.AdmissionChecksStrategy.AdmissionChecks))
	for _, r := range cq.Spec.AdmissionChecksStrategy.AdmissionChecks {
		out = append(out, string(r.Name))
	}
	return out
}
