// Package webhook defaults and validates TrainJobs for Kueue: queued jobs
// are suspended and handed to the queue (or to MultiKueue) at create, and
// what would leave a job holding quota it can never use is refused with
// the field and the fix.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Webhook defaults and validates TrainJobs for Kueue. It is registered with
// failurePolicy Fail, like Kueue's own: a queued job must never start
// unqueued because the webhook was down.
type Webhook struct {
	client client.Client // cached reads
	// live reads what the cache may not have seen yet: a default
	// LocalQueue created a moment before the job (one kubectl apply of
	// both).
	live client.Reader
	opts settings.Shared
}

// Setup registers the TrainJob webhook with the manager's server.
func Setup(mgr ctrl.Manager, opts settings.Shared) error {
	wh := &Webhook{client: mgr.GetClient(), live: mgr.GetAPIReader(), opts: opts}
	return ctrl.NewWebhookManagedBy(mgr, &trainjob.TrainJob{}).
		WithDefaulter(wh).
		WithValidator(wh).
		Complete()
}

var (
	_ admission.Defaulter[*trainjob.TrainJob] = (*Webhook)(nil)
	_ admission.Validator[*trainjob.TrainJob] = (*Webhook)(nil)
)

// The TrainJob webhooks have failurePolicy Fail, like Kueue's own: a
// queued job must never start unqueued because the webhook was down.
// +kubebuilder:webhook:path=/mutate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create,versions=v1alpha1,name=mtrainjob.trainjob-kueue.dev,admissionReviewVersions=v1

// job wraps a TrainJob for the job framework's checks, which read the job
// alone: a webhook observes nothing for it.
func (w *Webhook) job(obj *trainjob.TrainJob) *integration.TrainJob {
	return integration.ForChecks(obj, w.client, w.opts)
}

// Default queues the job: default LocalQueue if the namespace has one,
// handed to MultiKueue when its ClusterQueue dispatches, and suspended when
// Kueue is to manage it.
func (w *Webhook) Default(ctx context.Context, obj *trainjob.TrainJob) error {
	job := w.job(obj)
	if w.opts.LocalQueueDefaulting {
		if err := jobframework.ApplyDefaultLocalQueueWithManagedJobsNamespaceSelector(ctx, w.namespaces(), job.Object(), w.defaultQueueExists(ctx, jobframework.QueueNameForObject(job.Object()) == ""), w.opts.ManagedJobsNamespaceSelector); err != nil {
			return err
		}
	}
	if err := w.defaultManagedBy(ctx, job); err != nil {
		return err
	}
	suspend, err := jobframework.WorkloadShouldBeSuspended(ctx, job.Object(), w.namespaces(), w.opts.ManageJobsWithoutQueueName, w.opts.ManagedJobsNamespaceSelector)
	if err != nil {
		return err
	}
	if suspend {
		job.Suspend()
		// As Kueue's own webhook does: the job stays runnable by Kueue's
		// built-in integration should the cluster switch back to it.
		// Standing by, that webhook runs and adds the mark itself,
		// unconditionally: a second one, ours, would be a duplicate key
		// of spec.runtimePatches and refuse the create whenever Kueue's
		// webhook is called after ours.
		if !w.opts.BuiltInTrainJob {
			w.opts.Shape.MarkForBuiltIn(&job.TrainJob)
		}
	}
	job.TrainJob.DeepCopyInto(obj)
	return nil
}

// namespaces is the cached client, asking the API server for a namespace
// it has not seen (namespacesLive).
func (w *Webhook) namespaces() client.Client {
	return namespacesLive{Client: w.client, live: w.live}
}

// queueLabel is Kueue's queue-name label.
const queueLabel = constants.QueueLabel

// defaultQueueExists is Kueue's LocalQueueDefaulting lookup, from the
// informer cache: our process has no Kueue queue manager to ask. With
// askOnMiss (the answer can label the job: it has no queue name), a miss
// is asked of the API server again: a LocalQueue named default created a
// moment before the job (one kubectl apply of both) may not be in the
// cache yet, and the job would go unqueued for good (Kueue's own webhook,
// reading its queue manager alone, does that). Kueue's helper asks before
// it looks at the job's label, so a labelled job must not cost that read:
// it would be one per create. A read that fails is taken as no default
// queue, the answer that changes nothing; Kueue's helper asks a yes or no.
func (w *Webhook) defaultQueueExists(ctx context.Context, askOnMiss bool) func(namespace string) bool {
	return func(namespace string) bool {
		key := client.ObjectKey{Namespace: namespace, Name: string(constants.DefaultLocalQueueName)}
		var lq kueue.LocalQueue
		err := w.client.Get(ctx, key, &lq)
		if apierrors.IsNotFound(err) && askOnMiss && w.live != nil {
			err = w.live.Get(ctx, key, &lq)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Error(err, "Reading the default LocalQueue", "namespace", namespace)
		}
		return err == nil
	}
}

// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create;update,versions=v1alpha1,name=vtrainjob.trainjob-kueue.dev,admissionReviewVersions=v1

func (w *Webhook) ValidateCreate(ctx context.Context, obj *trainjob.TrainJob) (admission.Warnings, error) {
	job := w.job(obj)
	if job.Runner() == trainjob.RunElsewhere {
		return nil, nil
	}
	errs := jobframework.ValidateJobOnCreate(job)
	errs = append(errs, validateGangAnnotations(nil, &job.TrainJob, w.gangs())...)
	errs = append(errs, w.forged(nil, &job.TrainJob)...)
	errs = append(errs, w.inTreeMarked(nil, &job.TrainJob)...)
	errs = append(errs, w.noRoom(&job.TrainJob)...)
	unrunnable, err := w.unrunnable(ctx, &job.TrainJob)
	if err != nil {
		return nil, err
	}
	errs = append(errs, unrunnable...)
	unmanaged, err := w.unmanagedNamespace(ctx, job)
	if err != nil {
		return nil, err
	}
	errs = append(errs, unmanaged...)
	dispatch, err := w.validateDispatch(ctx, job)
	if err != nil {
		return nil, err
	}
	errs = append(errs, dispatch...)
	w.refused("create", errs)
	return nil, errs.ToAggregate()
}

func (w *Webhook) ValidateUpdate(ctx context.Context, oldObj, newObj *trainjob.TrainJob) (admission.Warnings, error) {
	oldJob := w.job(oldObj)
	newJob := w.job(newObj)
	if newJob.Runner() == trainjob.RunElsewhere {
		return nil, nil
	}
	errs := jobframework.ValidateJobOnCreate(newJob)
	errs = append(errs, validateGangAnnotations(&oldJob.TrainJob, &newJob.TrainJob, w.gangs())...)
	if jobframework.QueueName(oldJob) != jobframework.QueueName(newJob) {
		unmanaged, err := w.unmanagedNamespace(ctx, newJob)
		if err != nil {
			return nil, err
		}
		errs = append(errs, unmanaged...)
		dispatch, err := w.validateDispatch(ctx, newJob)
		if err != nil {
			return nil, err
		}
		errs = append(errs, dispatch...)
	}
	errs = append(errs, jobframework.ValidateJobOnUpdate(oldJob, newJob, func(ns string) bool {
		return w.opts.LocalQueueDefaulting && w.defaultQueueExists(ctx, true)(ns)
	})...)
	// Standing by, Kueue's built-in integration starts and stops the jobs
	// (a full Update that fills its runtime patch, an unsuspend): what we
	// refuse of anyone but us would refuse it.
	if w.opts.BuiltInTrainJob {
		w.refused("update", errs)
		return nil, errs.ToAggregate()
	}
	if req, err := admission.RequestFromContext(ctx); err != nil || req.UserInfo.Username != w.opts.ManagerUsername || w.opts.ManagerUsername == "" {
		errs = append(errs, w.forged(&oldJob.TrainJob, &newJob.TrainJob)...)
		errs = append(errs, w.inTreeMarked(&oldJob.TrainJob, &newJob.TrainJob)...)
		errs = append(errs, w.queuedStart(oldJob, newJob)...)
		errs = append(errs, w.fixedCounts(&oldJob.TrainJob, &newJob.TrainJob)...)
		// A job that was unrunnable already is left to its owner to mend:
		// only an edit that breaks it is refused.
		if w.opts.Shape.Full(&oldJob.TrainJob) == "" {
			errs = append(errs, w.noRoom(&newJob.TrainJob)...)
		}
		// The pods are a function of the spec and the runtime alone: an
		// update that leaves the spec as it was (labels, annotations) can't
		// make the job unrunnable, and is not computed twice over.
		if !equality.Semantic.DeepEqual(oldJob.Spec, newJob.Spec) {
			was, err := w.unrunnable(ctx, &oldJob.TrainJob)
			if err != nil {
				return nil, err
			}
			if len(was) == 0 {
				is, err := w.unrunnable(ctx, &newJob.TrainJob)
				if err != nil {
					return nil, err
				}
				errs = append(errs, is...)
			}
		}
	}
	w.refused("update", errs)
	return nil, errs.ToAggregate()
}

// refused counts a refusal by the field it names first, for the
// dashboard's refusals by reason.
func (w *Webhook) refused(operation string, errs field.ErrorList) {
	if len(errs) > 0 {
		w.opts.Metrics.WebhookRefused(operation, errs[0].Field)
	}
}

func (w *Webhook) ValidateDelete(context.Context, *trainjob.TrainJob) (admission.Warnings, error) {
	return nil, nil
}

// forged rejects changes to entries carrying our ownership marker made by
// anyone but us: a forged one would be removed on preemption and taken for
// an admission; removing or changing ours would start a job unplaced.
func (w *Webhook) forged(old, job *trainjob.TrainJob) field.ErrorList {
	var errs field.ErrorList
	what, fix := w.opts.Shape.Marker()
	for _, path := range w.opts.Shape.Tampered(old, job) {
		errs = append(errs, field.Forbidden(field.NewPath(path),
			fmt.Sprintf("%s are written by trainjob-kueue at admission and removed by it on preemption; nobody else may add, change or remove them (%s)", what, fix)))
	}
	return errs
}

// inTreeMarked refuses entries carrying the marker of Kueue's in-tree
// TrainJob integration that a user adds (at create, or by an update that
// adds more than the job had): that integration writes them at admission,
// so every admission (ours too, for a switch of integrations with jobs in
// flight) removes them as an integration's, and the user's entry would be
// lost. A new job can't hold a real one: no integration admitted it yet;
// entries an in-tree admission left on a job are not the user's to answer.
func (w *Webhook) inTreeMarked(old, job *trainjob.TrainJob) field.ErrorList {
	marked := w.opts.Shape.InTreeMarked(job)
	if old != nil && len(marked) <= len(w.opts.Shape.InTreeMarked(old)) {
		return nil
	}
	var errs field.ErrorList
	for _, path := range marked {
		errs = append(errs, field.Forbidden(field.NewPath(path),
			"this marks an entry Kueue's in-tree TrainJob integration writes at admission; such entries are removed at every admission, so yours would be lost: give your entry a manager name (or labels) of your own"))
	}
	return errs
}

// noRoom refuses a job whose override list leaves no room for the entry its
// admission needs: it would hold quota and never start.
func (w *Webhook) noRoom(job *trainjob.TrainJob) field.ErrorList {
	if msg := w.opts.Shape.Full(job); msg != "" {
		return field.ErrorList{field.Forbidden(field.NewPath("spec").Child(strings.TrimPrefix(w.opts.Shape.Name(), "spec.")), msg)}
	}
	return nil
}

// unmanagedNamespace refuses a queue name in a namespace Kueue does not
// manage (managedJobsNamespaceSelector): Kueue would never admit the job,
// and the suspend the queue name brings would hold it for ever.
func (w *Webhook) unmanagedNamespace(ctx context.Context, job *integration.TrainJob) (field.ErrorList, error) {
	queue := jobframework.QueueName(job)
	if queue == "" || w.opts.ManagedJobsNamespaceSelector == nil {
		return nil, nil
	}
	ns := &corev1.Namespace{}
	if err := w.client.Get(ctx, client.ObjectKey{Name: job.Namespace}, ns); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if w.opts.ManagedJobsNamespaceSelector.Matches(labels.Set(ns.Labels)) {
		return nil, nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "labels").Key(queueLabel), string(queue),
		fmt.Sprintf("namespace %s is not managed by Kueue (its labels do not match Kueue's managedJobsNamespaceSelector %q): the job would stay suspended and never be admitted. Remove the label to run the job without Kueue, or have the namespace included", job.Namespace, w.opts.ManagedJobsNamespaceSelector.String()))}, nil
}

// unrunnable refuses at create what reconciling the job could only report
// afterwards: pods that cannot be computed from the job and its runtime
// (negative or fractional quantities, a topology request Kueue refuses,
// more roles than the installed Kueue's PodSet limit). A runtime that does
// not exist yet is no refusal: the job waits for it.
func (w *Webhook) unrunnable(ctx context.Context, job *trainjob.TrainJob) (field.ErrorList, error) {
	rt, _, err := runtimesource.ReadLive(ctx, w.client, job)
	if err != nil {
		var rtErr *runtimesource.Error
		if !errors.As(err, &rtErr) {
			// A read that failed says nothing of the job: answered as an
			// error, which the API server retries or reports, never as
			// "nothing to refuse".
			return nil, err
		}
		if rtErr.Reason == runtimesource.ReasonUnsupportedRuntime {
			return field.ErrorList{field.NotSupported(field.NewPath("spec", "runtimeRef", "kind"), ptr.Deref(job.Spec.RuntimeRef.Kind, ""), []string{trainer.TrainingRuntimeKind, trainer.ClusterTrainingRuntimeKind})}, nil
		}
		return nil, nil
	}
	roles, err := podsets.Roles(job, rt, w.opts.Shape)
	if err == nil {
		_, err = podsets.FromRoles(roles, w.opts.PodSets)
	}
	if err != nil {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), fmt.Sprintf("Kueue cannot queue this TrainJob: %v", err))}, nil
	}
	return nil, nil
}

// gangs are the gang schedulers whose PodGroups the cluster serves.
func (w *Webhook) gangs() gang.Schedulers {
	return w.opts.Gangs
}

// validateGangAnnotations refuses gang settings (and a checkpoint interval
// or preemption notice)
// we would not understand, or a gang mode whose PodGroups the cluster does
// not serve (gangs), naming the annotation and what it takes. On an update
// only a changed value is judged: one a former release took must not block
// the job's other updates (our own suspend among them).
func validateGangAnnotations(old, job *trainjob.TrainJob, gangs gang.Schedulers) field.ErrorList {
	var was map[string]string
	if old != nil {
		was = old.Annotations
	}
	return judgeAnnotations(was, job.Annotations, map[string]func(string) error{
		names.GangSchedulingAnnotation: func(mode string) error {
			if err := gang.ValidMode(mode); err != nil {
				return err
			}
			return gangs.Available(mode)
		},
		names.GangScheduleTimeoutAnnotation: func(v string) error {
			_, err := gang.ValidTimeout(v)
			return err
		},
		names.CheckpointIntervalAnnotation: func(v string) error {
			_, err := preemptcost.ParseCheckpointInterval(v)
			return err
		},
		names.PreemptionNoticeAnnotation: func(v string) error {
			_, err := preemptcost.ParseNoticeRequest(v)
			return err
		},
	})
}
