package integration

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Reconciler drives TrainJobs through Kueue's job framework.
type Reconciler struct {
	jr *jobframework.JobReconciler
	// noPodsReady is jr without the PodsReady step, for a reconcile that
	// starts an admitted job or has no PodsReady condition to write yet
	// (frameworkFor); nil without waitForPodsReady.
	noPodsReady *jobframework.JobReconciler
	// ready: jobs whose next reconcile writes their pods ready.
	ready readyToReport
	deps  *deps
}

// NewReconciler builds a reconciler; c reads from the manager's cache,
// apiReader from the API server.
func NewReconciler(c client.Client, apiReader client.Reader, recorder events.EventRecorder, opts Options) *Reconciler {
	r := &Reconciler{
		jr:   newFrameworkReconciler(c, recorder, opts),
		deps: newDeps(c, apiReader, recorder, opts),
	}
	if opts.WaitForPodsReady {
		starting := opts
		starting.WaitForPodsReady = false
		r.noPodsReady = newFrameworkReconciler(c, recorder, starting)
	}
	return r
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	jr, unwritten, err := r.frameworkFor(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	t := &TrainJob{deps: r.deps}
	fwCtx := ctx
	if jr == r.jr && r.noPodsReady != nil {
		// This reconcile runs the PodsReady step: a wave's end may be
		// written whole (wave_end.go).
		fwCtx = withWaveEnd(ctx)
	}
	res, err := jr.ReconcileGenericJob(fwCtx, req, t)
	t.tell()
	if t.noticeLeft > 0 && err == nil && (res.RequeueAfter == 0 || t.noticeLeft < res.RequeueAfter) {
		res.RequeueAfter = t.noticeLeft
	}
	if t.readErr == nil {
		if relErr := t.releaseWorkloadAPIGroups(ctx); relErr != nil {
			err = errors.Join(err, relErr)
		}
	}
	if unwritten && err == nil && t.readyUnreported(ctx) {
		// The next reconcile writes Started, at once: with blockAdmission
		// Kueue admits nothing else until it reads it.
		r.ready.mark(req.NamespacedName)
		res.RequeueAfter, res.Priority = time.Millisecond, ptr.To(decisionPriority)
	}
	if t.readErr != nil {
		// The observation failed (Skip): the framework did nothing, and the
		// read is retried with backoff.
		res, err = ctrl.Result{}, t.readErr
	} else if holdErr := t.holdForRuntime(ctx); holdErr != nil {
		return ctrl.Result{}, errors.Join(err, holdErr)
	} else if wait, holdErr := t.holdForPolicy(ctx, time.Now()); holdErr != nil {
		return ctrl.Result{}, errors.Join(err, holdErr)
	} else if wait > 0 && err == nil && (res.RequeueAfter == 0 || wait < res.RequeueAfter) {
		res.RequeueAfter = wait
	}
	if err != nil {
		if later, missing := r.missingReference(ctx, req, err); missing {
			res, err = later, nil
		}
	}
	return res, err
}

// SetupWithManager watches TrainJobs, their Workloads, and the runtimes they
// use: a job created before its runtime, or whose runtime is edited while it
// queues, is reconciled again when the runtime changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.deps.runtimes.PruneOnDelete(mgr.GetCache()); err != nil {
		return err
	}
	manageAll := r.deps.opts.ManageJobsWithoutQueueName
	b := ctrl.NewControllerManagedBy(mgr).
		Named("trainjob").
		For(&trainjob.TrainJob{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(e event.CreateEvent) bool { return e.IsInInitialList },
			UpdateFunc: func(e event.UpdateEvent) bool { return routeOf(e, manageAll) == routeDefault },
		})).
		Watches(&trainjob.TrainJob{}, arrivedOrStartedFirst(), builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(e event.CreateEvent) bool { return !e.IsInInitialList },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
			UpdateFunc:  func(e event.UpdateEvent) bool { return routeOf(e, manageAll) == routeFirst },
		})).
		Watches(&kueue.Workload{}, decisionsFirst(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &trainjob.TrainJob{}, handler.OnlyControllerOwner())),
			builder.WithPredicates(notOnlyReworded()))
	if r.deps.caps.NoJobsStatus {
		// Trainer v2.0 reports its Jobs only on the JobSet.
		b = b.Owns(&jobsetapi.JobSet{})
	}
	if r.deps.opts.Gangs.WorkloadAPI {
		// A running admission's group deleted is made again
		// (podgroup_keep.go): its deletion wakes its job.
		pg := &metav1.PartialObjectMetadata{}
		pg.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
		b = b.Watches(pg, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &trainjob.TrainJob{}, handler.OnlyControllerOwner()),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc:  func(event.CreateEvent) bool { return false },
				UpdateFunc:  func(event.UpdateEvent) bool { return false },
				GenericFunc: func(event.GenericEvent) bool { return false },
			}))
	}
	if r.deps.opts.MultiKueue {
		b = b.Watches(&kueue.AdmissionCheck{}, handler.EnqueueRequestsFromMapFunc(r.jobsOfAdmissionCheck), builder.WithPredicates(checkComesOrGoes))
	}
	return b.
		Watches(&trainer.TrainingRuntime{}, newPacedFanOut(r.jobsUsing(trainer.TrainingRuntimeKind), runtimeFanOutPerSecond),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&trainer.ClusterTrainingRuntime{}, newPacedFanOut(r.jobsUsing(trainer.ClusterTrainingRuntimeKind), runtimeFanOutPerSecond),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kueue.WorkloadPriorityClass{}, handler.EnqueueRequestsFromMapFunc(r.jobsOfPriorityClass),
			builder.WithPredicates(predicate.Funcs{
				UpdateFunc: func(event.UpdateEvent) bool { return false },
				DeleteFunc: func(event.DeleteEvent) bool { return false },
			})).
		Complete(r)
}
