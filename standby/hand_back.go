// Package standby is what the manager does while Kueue runs its built-in
// TrainJob integration (a switch to it, or before a switch from it): hand
// the jobs it stopped back to it (hand_back.go). The webhooks run too:
// the TrainJob webhook in its standby rules, the children webhooks as
// always (what they do depends on the object, not on the mode: webhook/),
// and the queue condition (queuecondition/: it reads the job and its
// Workload, whichever integration keeps them); nothing else does.
package standby

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/jobpatch"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// ReasonHandedBack: standing by for Kueue's built-in integration, we
// removed our entries from a stopped job (and gave it the runtime patch
// that integration needs), so it can start the job again.
const ReasonHandedBack = "HandedBack"

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
	opts HandBackOptions
}

// HandBackOptions are what the hand-back reads and writes through.
type HandBackOptions struct {
	// Client reads jobs from the cache and writes them.
	Client client.Client
	// Fresh reads a job from the API server when the cache's copy is stale.
	Fresh    client.Reader
	Recorder events.EventRecorder
	// Shape is the installed Trainer's override field.
	Shape shape.Shape
	// ManageJobsWithoutQueueName is Kueue's setting of that name.
	ManageJobsWithoutQueueName bool
}

// NewHandBack hands stopped jobs back, for a manager that stands by. It is
// the only controller that writes a job's spec then.
func NewHandBack(opts HandBackOptions) *HandBack {
	return &HandBack{opts: opts}
}

// SetupWithManager watches TrainJobs.
func (h *HandBack) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("trainjob-hand-back").
		For(&trainjob.TrainJob{}, builder.WithPredicates(predicate.Funcs{UpdateFunc: notOnlyTold})).
		Complete(h)
}

// notOnlyTold: the update is more than the queue condition's write, which
// changes nothing handedBack reads.
func notOnlyTold(e event.UpdateEvent) bool {
	old, oldOK := e.ObjectOld.(*trainjob.TrainJob)
	job, newOK := e.ObjectNew.(*trainjob.TrainJob)
	return !oldOK || !newOK || !lifecycle.OnlyToldChanged(old, job)
}

func (h *HandBack) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &trainjob.TrainJob{}
	if err := h.opts.Client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ops := func(j *trainjob.TrainJob) []shape.Op {
		if !handedBack(j, h.opts.ManageJobsWithoutQueueName) {
			return nil
		}
		return append(h.opts.Shape.HandBack(j), shape.DropCopiedQueueLabel(j)...)
	}
	if ops(job) == nil {
		return ctrl.Result{}, nil
	}
	done, err := jobpatch.Guarded(ctx, h.opts.Client, h.opts.Fresh, job, ops)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("handing TrainJob %s back to Kueue's built-in integration: %w", req, err)
	}
	if done {
		h.opts.Recorder.Eventf(job, nil, corev1.EventTypeNormal, ReasonHandedBack, "Stop",
			"Kueue runs its built-in TrainJob integration: removed trainjob-kueue's entries from %s of this stopped job, so that integration can start it again", h.opts.Shape.Capabilities().Field)
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
