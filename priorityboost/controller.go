// Package priorityboost keeps Kueue's priority boost (KEP-7990,
// kueue.x-k8s.io/priority-boost) on the Workloads of TrainJobs whose
// ClusterQueue has a preemption-cost policy: among jobs of one priority,
// the one that would lose least is preempted first, and a job preempted
// again and again climbs above newcomers. The arithmetic is package
// preemptcost's; this package reads the signals from the cache and writes
// the boost only when a step of it changes.
//
// Without a policy it makes no request: every read is from the informer
// cache, and a Workload with no boost of ours is never written. On a
// cluster where no ClusterQueue has a policy it does not even reconcile
// (setup.go).
package priorityboost

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/saidonce"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Event reasons, stable: users and alerts match on them.
const (
	// ReasonBoostNotOurs: the Workload's boost was set by someone else and
	// the policy does not take it over; it is left alone.
	ReasonBoostNotOurs = "PriorityBoostNotOurs"
)

// Metric actions.
const (
	actionSet     = "set"
	actionRemoved = "removed"
)

// Options wire a Reconciler.
type Options struct {
	// Client reads from the informer cache and writes to the API server.
	Client client.Client
	// Runtimes tell the job's roles, for its phase.
	Runtimes *runtimesource.Source
	Recorder events.EventRecorder
	Metrics  *metrics.Metrics
	// GateOn: the deployed Kueue honours priority boosts.
	GateOn bool
	// Now is the clock a minimum run time is measured by; nil for
	// time.Now.
	Now func() time.Time
}

// Reconciler keeps the boost of one TrainJob's Workload, by TrainJob key.
type Reconciler struct {
	opts Options
	said *saidonce.Memory
}

// New makes a Reconciler.
func New(opts Options) *Reconciler { return &Reconciler{opts: opts, said: saidonce.New()} }

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &trainjob.TrainJob{}
	if err := r.opts.Client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if job.Runner() == trainjob.RunElsewhere || job.UID == "" {
		return ctrl.Result{}, nil
	}
	// On a MultiKueue worker a dispatched job runs against its prebuilt
	// Workload: the worker ClusterQueue's policy boosts it too.
	wl, err := jobworkload.Of(ctx, r.opts.Client, job)
	if err != nil || wl == nil {
		return ctrl.Result{}, err
	}
	policy, set, err := r.policyOf(ctx, wl)
	if err != nil {
		return ctrl.Result{}, err
	}
	ours := preemptcost.Marked(wl)
	if set && policy == nil {
		return ctrl.Result{}, nil // can't be used: refused, said to the ClusterQueue (Warner)
	}
	if policy == nil {
		// No policy (any more): only our own boost is taken back.
		if ours {
			return ctrl.Result{}, r.write(ctx, wl, nil)
		}
		return ctrl.Result{}, nil
	}
	if !r.opts.GateOn {
		return ctrl.Result{}, nil // the ClusterQueue is told (Warner)
	}
	roles, err := r.roles(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	metric := ""
	if policy.Checkpoint != nil {
		metric = policy.Checkpoint.MetricName()
	}
	signals := preemptcost.SignalsOf(job, roles, wl, r.now(), metric)
	boost := preemptcost.Of(*policy, signals)
	// A part that changes with time alone (a minimum run time up) wakes
	// the job when it does, and only then.
	var res ctrl.Result
	if n := preemptcost.NextChange(*policy, signals); n > 0 {
		res.RequeueAfter = time.Duration(n) * time.Second
	}
	current, set := preemptcost.BoostOn(wl)
	if set && !ours && !policy.TakeOver {
		if r.said.First(wl.UID, ReasonBoostNotOurs+current) {
			r.opts.Recorder.Eventf(job, nil, corev1.EventTypeNormal, ReasonBoostNotOurs, "PriorityBoost",
				"Workload %s has %s=%s, set by someone else: left alone (the ClusterQueue's policy would set %d; add \"takeOver\": true to the policy to replace it)",
				wl.Name, names.KueuePriorityBoostAnnotation, current, boost.Total)
		}
		return ctrl.Result{}, nil
	}
	if boost.Total == 0 {
		if ours || set {
			return res, r.write(ctx, wl, nil)
		}
		return res, nil
	}
	if preemptcost.Written(wl, boost) {
		return res, nil
	}
	return res, r.write(ctx, wl, &boost)
}

func (r *Reconciler) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now()
	}
	return time.Now()
}

// policyOf is the policy of the ClusterQueue wl is queued in or admitted
// to, and whether it has one; nil with set true when it can't be used (the
// Warner tells the ClusterQueue).
func (r *Reconciler) policyOf(ctx context.Context, wl *kueue.Workload) (p *preemptcost.Policy, set bool, err error) {
	cq, err := clusterQueueOf(ctx, r.opts.Client, wl)
	if err != nil || cq == nil {
		return nil, false, err
	}
	policy, set, err := preemptcost.PolicyOf(cq)
	if !set || err != nil {
		return nil, set, nil
	}
	return &policy, true, nil
}

// clusterQueueOf is the ClusterQueue that admitted wl, or the one its
// LocalQueue leads to; nil when there is none (yet).
func clusterQueueOf(ctx context.Context, c client.Reader, wl *kueue.Workload) (*kueue.ClusterQueue, error) {
	name := ""
	if wl.Status.Admission != nil {
		name = string(wl.Status.Admission.ClusterQueue)
	} else if wl.Spec.QueueName != "" {
		lq := &kueue.LocalQueue{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}, lq); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		name = string(lq.Spec.ClusterQueue)
	}
	if name == "" {
		return nil, nil
	}
	cq := &kueue.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cq); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return cq, nil
}

// roles of the job, for its phase; nil when they can't be computed (the
// job reconciler says why).
func (r *Reconciler) roles(ctx context.Context, job *trainjob.TrainJob) ([]podsets.Role, error) {
	p, err := r.opts.Runtimes.Project(ctx, job)
	var rtErr *runtimesource.Error
	switch {
	case errors.As(err, &rtErr):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return p.Roles, nil
}

// write sets b (nil: removes the boost and our mark) on wl, guarded by the
// resourceVersion read: a Workload changed meanwhile is reconciled again
// from its new state.
func (r *Reconciler) write(ctx context.Context, wl *kueue.Workload, b *preemptcost.Boost) error {
	patched := wl.DeepCopy()
	action := actionRemoved
	if b != nil {
		action = actionSet
	}
	preemptcost.SetOn(patched, b)
	err := r.opts.Client.Patch(ctx, patched, client.MergeFromWithOptions(wl, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		// A refusal is no race: retrying would be refused again. Said once,
		// and the next change of the Workload tries again.
		if r.said.First(wl.UID, "refused: "+err.Error()) {
			ctrl.LoggerFrom(ctx).Error(err, "The API server refused the priority boost of a Workload", "workload", wl.Namespace+"/"+wl.Name)
		}
		return nil
	case err != nil:
		return fmt.Errorf("writing the priority boost of Workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	r.opts.Metrics.BoostWritten(action)
	return nil
}
