package integration

import (
	"context"
	"fmt"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// HandBack runs while we stand by for Kueue's built-in TrainJob
// integration (a switch back to it): a queued job that integration stopped
// after we had started it still carries our entries, with the placement of
// our admission, which Trainer would apply after that integration's own at
// its next start. Once the job is suspended and its pods are gone (Trainer
// takes override changes only then), our entries go and the marker that
// integration needs to start and stop the job is added where missing
// (shape.HandBack); Kueue's own entries are never touched. The queue-name
// label Kueue v0.16's webhook copies into a job's spec.labels goes too: the
// moment Kueue's built-in integration is turned off, its JobSet
// integration would queue the job's JobSet a second time.
type HandBack struct {
	deps *deps
}

// NewHandBack hands stopped jobs back, for a manager that stands by
// (Options.BuiltInTrainJob). It is the only controller that writes then.
func NewHandBack(mgr ctrl.Manager, opts Options) *HandBack {
	return &HandBack{deps: newDeps(mgr.GetClient(), mgr.GetAPIReader(), opts.Recorder, opts)}
}

// SetupWithManager watches TrainJobs.
func (h *HandBack) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("trainjob-hand-back").
		For(&trainjob.TrainJob{}).
		Complete(h)
}

func (h *HandBack) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &trainjob.TrainJob{}
	if err := h.deps.client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ops := func(j *trainjob.TrainJob) []shape.Op {
		if !handedBack(j, h.deps.opts.ManageJobsWithoutQueueName) {
			return nil
		}
		return append(h.deps.opts.Shape.HandBack(j), dropCopiedQueueLabel(j)...)
	}
	if ops(job) == nil {
		return ctrl.Result{}, nil
	}
	done, err := patchGuarded(ctx, h.deps.client, h.deps.apiReader, job, ops)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("handing TrainJob %s back to Kueue's built-in integration: %w", req, err)
	}
	if done {
		h.deps.speak(job, normal(ReasonHandedBack, actionStop,
			"Kueue runs its built-in TrainJob integration: removed trainjob-kueue's entries from "+h.deps.caps.Field+" of this stopped job, so that integration can start it again"))
	}
	return ctrl.Result{}, nil
}

// handedBack: a job Kueue's built-in integration runs (it has a queue
// name, or Kueue manages jobs without one, and it is not MultiKueue's),
// stopped, its child Jobs drained. With manageJobsWithoutQueueName an
// unlabelled job we started is that integration's now too, and our stale
// entries would follow it into its next start.
func handedBack(job *trainjob.TrainJob, manageAll bool) bool {
	if !job.Suspended() || (job.Labels[constants.QueueLabel] == "" && !manageAll) || job.Runner() != trainjob.RunLocally {
		return false
	}
	for _, s := range job.Status.JobsStatus {
		if ptr.Deref(s.Active, 0) > 0 {
			return false
		}
	}
	return true
}
