package queuecondition

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/jobpatch"
	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/saidonce"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// DefaultSettle is how long a job's first state must last before it is
// written, unless the job is admitted: on a queue with room a job is
// admitted within a second of its creation, and then one write (Admitted)
// says it all; a job that waits longer is told it waits 5 s late.
const DefaultSettle = 5 * time.Second

// staleRetry is how soon a write whose copy of the job was stale is tried
// again from the cache, should no change of the job wake it sooner: the
// informer is a moment behind, and a live read for it would cost a
// request a job (the cache serves it for free once caught up).
const staleRetry = time.Second

// ReasonConditionRefused: the API server refused our condition's write
// (the status's validation, a webhook): said once per job and message, not
// retried until the job changes.
const ReasonConditionRefused = "QueueConditionRefused"

// Options configure the Reconciler.
type Options struct {
	// Client reads from the informer cache and writes to the API server.
	Client   client.Client
	Recorder events.EventRecorder
	// ManageJobsWithoutQueueName: Kueue's configuration queues jobs
	// without a queue name.
	ManageJobsWithoutQueueName bool
	// Settle: DefaultSettle when zero.
	Settle time.Duration
	// Now: time.Now when nil.
	Now func() time.Time
}

// Reconciler keeps one TrainJob's condition, by TrainJob key.
type Reconciler struct {
	opts Options
	// said: the refusals told; refused: the writes refused, not tried
	// again until the job changes.
	said, refused *saidonce.Memory
}

// New makes a Reconciler.
func New(opts Options) *Reconciler {
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Reconciler{opts: opts, said: saidonce.New(), refused: saidonce.New()}
}

// Reconcile implements reconcile.Reconciler: from the cache, one write at
// most, and only when the condition would say something else.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &trainjob.TrainJob{}
	if err := r.opts.Client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if job.Runner() == trainjob.RunElsewhere || job.UID == "" || !job.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // another controller's job
	}
	wl, err := jobworkload.Of(ctx, r.opts.Client, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if job.Runner() == trainjob.RunRemotely && dispatched(wl) {
		// MultiKueue's to write from now on: it copies the worker's
		// TrainJob status, our condition on the worker's copy with it,
		// onto the manager's job once it dispatches (after a reservation
		// here); a write of ours would be overwritten, and rewritten.
		return ctrl.Result{}, nil
	}
	st := lifecycle.Of(lifecycle.Observed{Job: job, Workload: wl, ManageJobsWithoutQueueName: r.opts.ManageJobsWithoutQueueName})
	cq, err := r.clusterQueueOf(ctx, job.Namespace, st)
	if err != nil {
		return ctrl.Result{}, err
	}
	c, write := conditionFor(st, cq)
	on := apimeta.FindStatusCondition(job.Status.Conditions, names.AdmittedCondition)
	if !write || same(on, c) {
		return ctrl.Result{}, nil
	}
	if age := r.opts.Now().Sub(job.CreationTimestamp.Time); on == nil && c.Status != metav1.ConditionTrue && age < r.opts.Settle {
		return ctrl.Result{RequeueAfter: r.opts.Settle - age}, nil
	}
	if wait := r.startPending(st, wl); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if r.refused.Said(job.UID, refusalKey(job, c)) {
		return ctrl.Result{}, nil // refused for this very job and words: the job's next change tries again
	}
	return r.write(ctx, job, c)
}

// startPending is how long to leave an admitted job's condition unwritten
// while our start is about to write the job (unsuspend it): written now,
// its copy would be stale a moment later — a failed write, then another.
// The start's write wakes the condition (spec.suspend) with the job as it
// is; a start that waits (a PodGroup not written, a gang mode not served)
// gets the condition once the admission has lasted Settle. Admitted and
// Running say the same.
func (r *Reconciler) startPending(st lifecycle.Status, wl *kueue.Workload) time.Duration {
	if st.State != lifecycle.Admitted || wl == nil {
		return 0
	}
	admitted := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if admitted == nil {
		return 0
	}
	return r.opts.Settle - r.opts.Now().Sub(admitted.LastTransitionTime.Time)
}

// refusalKey names a refused write: the job as it was and what was to be
// written.
func refusalKey(job *trainjob.TrainJob, c metav1.Condition) string {
	return job.ResourceVersion + "|" + string(c.Status) + "|" + c.Reason + "|" + c.Message
}

// dispatched: MultiKueue may have made the job's copies on workers (its
// Workload holds a reservation on the manager, or was admitted on one).
func dispatched(wl *kueue.Workload) bool {
	return wl != nil && (apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) || wl.Status.ClusterName != nil)
}

// clusterQueueOf is where a waiting job's LocalQueue leads, from the
// cache; "" when it does not exist.
func (r *Reconciler) clusterQueueOf(ctx context.Context, namespace string, st lifecycle.Status) (string, error) {
	if !st.State.Waiting() || st.LocalQueue == "" {
		return st.ClusterQueue, nil
	}
	lq := &kueue.LocalQueue{}
	switch err := r.opts.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: st.LocalQueue}, lq); {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading LocalQueue %s/%s: %w", namespace, st.LocalQueue, err)
	}
	return string(lq.Spec.ClusterQueue), nil
}

// write patches the condition, through jobpatch as every TrainJob write
// of ours. A write whose guard fails (the cache was behind: Trainer or
// our start wrote the job a moment ago), or a conflict, is tried again
// from the cache once it caught up (the job's change wakes it, staleRetry
// at the latest), never with a live read; a refusal by the status's
// validation or a webhook is said once and waits for the job's next
// change, never retried as a conflict.
func (r *Reconciler) write(ctx context.Context, job *trainjob.TrainJob, c metav1.Condition) (ctrl.Result, error) {
	now := metav1.NewTime(r.opts.Now())
	var err error
	if job.Status.Conditions == nil {
		err = r.opts.Client.Status().Patch(ctx, job.DeepCopy(), firstConditionPatch(job, c, now))
	} else {
		_, err = jobpatch.GuardedStatus(ctx, r.opts.Client, nil, job.DeepCopy(), func(j *trainjob.TrainJob) []shape.Op { return conditionOps(j, c, now) })
	}
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case jobpatch.Stale(err):
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	case jobpatch.Refused(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err):
		r.refused.First(job.UID, refusalKey(job, c))
		msg := fmt.Sprintf("the API server refused trainjob-kueue's %s condition (%s: %s): %v; it is written again at the job's next change", names.AdmittedCondition, c.Reason, c.Message, err)
		if r.said.First(job.UID, msg) {
			ctrl.LoggerFrom(ctx).Error(err, "The API server refused the queue condition of a TrainJob", "trainJob", job.Namespace+"/"+job.Name)
			r.opts.Recorder.Eventf(job, nil, corev1.EventTypeWarning, ReasonConditionRefused, "Queue", "%s", msg)
		}
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, fmt.Errorf("writing condition %s of TrainJob %s/%s: %w", names.AdmittedCondition, job.Namespace, job.Name, err)
}

// SetupWithManager watches TrainJobs and their Workloads, passing only
// changes of what the state is read from (stateChanged): Kueue's touches
// of a pending Workload's message, Trainer's progress reports and our own
// writes of other fields wake nothing.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("trainjob-queue-condition").
		For(&trainjob.TrainJob{}, builder.WithPredicates(stateChanged(jobFingerprint))).
		Watches(&kueue.Workload{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &trainjob.TrainJob{}, handler.OnlyControllerOwner()),
			builder.WithPredicates(stateChanged(workloadFingerprint))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}

// stateChanged passes creates, deletes, and updates that change the
// fingerprint of what the lifecycle reads.
func stateChanged(fingerprint func(client.Object) string) predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool { return fingerprint(e.ObjectOld) != fingerprint(e.ObjectNew) },
	}
}

// jobFingerprint and workloadFingerprint are lifecycle's: what Of (and
// our condition's write) reads of each kind, tested there against every
// case of Of.
func jobFingerprint(o client.Object) string {
	if job, ok := o.(*trainjob.TrainJob); ok {
		return lifecycle.JobFingerprint(job)
	}
	return ""
}

func workloadFingerprint(o client.Object) string {
	if wl, ok := o.(*kueue.Workload); ok {
		return lifecycle.WorkloadFingerprint(wl)
	}
	return ""
}
