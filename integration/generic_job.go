package integration

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/saidonce"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// deps are what a TrainJob needs from its reconciler to answer the job
// framework, shared by every job of one reconciler: set once, but for what
// it learns of the installed Trainer at run time (twoRequestStart, an
// atomic) and the memories behind said and runtimes.
type deps struct {
	client    client.Client // cached reads; writes go to the API server
	apiReader client.Reader // uncached reads, when the cache is stale
	recorder  events.EventRecorder
	opts      Options
	// caps are what the installed Trainer can do.
	caps    shape.Capabilities
	metrics *metrics.Metrics
	// runtimes tell what Trainer will run for a job.
	runtimes *runtimesource.Source
	// said keeps permanent refusals to one event per Workload.
	said *saidonce.Memory
	// twoRequestStart: the installed Trainer refused an admission's start
	// in one request and took it in two (v2.2.0, whose CRD is v2.2.1's):
	// the capability its CRD could not tell, learned once by asking.
	twoRequestStart atomic.Bool
}

// newDeps are the deps of one reconciler: c reads from the manager's
// cache, apiReader from the API server.
func newDeps(c client.Client, apiReader client.Reader, recorder events.EventRecorder, opts Options) *deps {
	runtimes := opts.Runtimes
	if runtimes == nil {
		runtimes = runtimesource.New(c, apiReader, runtimesource.Options{Shape: opts.Shape, PodSets: opts.PodSets})
	}
	return &deps{client: c, apiReader: apiReader, recorder: recorder, opts: opts, caps: opts.Shape.Capabilities(),
		metrics: opts.Metrics, said: saidonce.New(), runtimes: runtimes}
}

// ForChecks is obj as the job framework's webhook checks see it: they read
// the job alone, so nothing is observed for it.
func ForChecks(obj *trainjob.TrainJob, c client.Client, s settings.Shared) *TrainJob {
	return &TrainJob{TrainJob: *obj, deps: &deps{client: c, opts: Options{Shared: s}, caps: s.Shape.Capabilities()}, obs: &observed{runner: obj.Runner()}}
}

// TrainJob adapts a Trainer TrainJob to Kueue's job framework. A new one is
// made for every reconcile; its answers are functions of the job and of
// what the reconcile observed at its start (Skip), never of a read of
// their own.
type TrainJob struct {
	trainjob.TrainJob
	deps *deps
	// obs is the reconcile's observation; nil before it is made.
	obs *observed
	// readErr: the observation failed; the reconcile ends with it.
	readErr error
	// notes are what the reconcile has to tell the job's owner, sent once
	// the job framework is done with it.
	notes []utterance
	// heldFor: the start was refused because the job's runtime does not
	// exist; the reconcile ends by holding the job for it (holdForRuntime).
	heldFor *runtimesource.Error
	// heldByPolicy: the start was refused by this ValidatingAdmissionPolicy;
	// the reconcile ends by holding the job (holdForPolicy).
	heldByPolicy string
	// noticeLeft: the job is in its preemption notice for this long yet
	// (stop_notice.go); the reconcile wakes it then.
	noticeLeft time.Duration
}

var (
	_ jobframework.GenericJob              = (*TrainJob)(nil)
	_ jobframework.JobWithCustomStop       = (*TrainJob)(nil)
	_ jobframework.JobWithReclaimablePods  = (*TrainJob)(nil)
	_ jobframework.JobWithManagedBy        = (*TrainJob)(nil)
	_ jobframework.JobWithPriorityClass    = (*TrainJob)(nil)
	_ jobframework.JobWithPodLabelSelector = (*TrainJob)(nil)
	_ jobframework.JobWithSkip             = (*TrainJob)(nil)
)

func (t *TrainJob) Object() client.Object        { return &t.TrainJob }
func (t *TrainJob) GVK() schema.GroupVersionKind { return trainjob.GVK }
func (t *TrainJob) Suspend()                     { t.Spec.Suspend = ptr.To(true) }

// Skip is the first thing the job framework asks once it has read the job,
// so the reconcile's one observation is made here. Jobs managed by a
// controller that is neither Trainer's nor MultiKueue's are that
// controller's alone: no Workload, no writes. Neither is a job whose
// Workload is finished and released (released.go). A failed read skips the rest
// of the reconcile and ends it with the error (Reconcile), so the
// controller retries with backoff instead of the framework acting on
// "nothing there".
func (t *TrainJob) Skip(ctx context.Context) bool {
	runner := t.Runner()
	if runner == trainjob.RunElsewhere {
		return true
	}
	if t.deps == nil || (!t.deps.opts.ManageJobsWithoutQueueName && jobframework.QueueName(t) == "") {
		// Not Kueue's (the framework ignores it next): nothing to observe.
		t.obs = &observed{runner: runner}
		return false
	}
	t.obs, t.readErr = t.deps.observe(ctx, &t.TrainJob, runner)
	if t.readErr != nil || t.obs.released {
		return true
	}
	if lost := t.obs.dispatch.lostChecks; len(lost) > 0 && t.obs.runsRemotely() {
		t.say(warning(ReasonAdmissionCheckLost, actionQueue, fmt.Sprintf("the Workload's admission check(s) %s name AdmissionChecks that no longer exist; the job stays where MultiKueue dispatched it (its Workload is not finished, so its worker copy is kept) until they are back or the job is deleted", strings.Join(lost, ", "))).once(t.obs.workload.UID))
	}
	return false
}

// IsSuspended: a job dispatched by MultiKueue stays suspended here for ever;
// to the job framework it is running while a worker runs it, so the
// framework never tries to start it on this cluster.
func (t *TrainJob) IsSuspended() bool {
	if t.obs.runner == trainjob.RunRemotely {
		return !t.obs.runsRemotely()
	}
	return t.Suspended()
}

// IsActive reports whether any child Job still has running pods on this
// cluster. A dispatched job has none here, whatever the status copied from
// its worker says.
func (t *TrainJob) IsActive() bool {
	if t.obs.runner == trainjob.RunRemotely {
		return false
	}
	for _, s := range t.obs.jobs {
		if ptr.Deref(s.Active, 0) > 0 {
			return true
		}
	}
	return false
}

func (t *TrainJob) PodLabelSelector() string {
	return fmt.Sprintf("%s=%s", jobsetapi.JobSetNameKey, t.Name)
}

// Finished is Trainer's verdict; a job that finished in its preemption
// notice is counted so (it completed: it is not preempted at all).
func (t *TrainJob) Finished(context.Context) (string, bool, bool) {
	msg, success, finished := t.TrainJob.Finished()
	if finished {
		t.noticeCompleted()
	}
	return msg, success, finished
}

// PriorityClass is the trainer step's priority class, not whichever role
// happens to come first in the runtime.
func (t *TrainJob) PriorityClass() string {
	if t.obs.runtimeErr != nil {
		return ""
	}
	return podsets.PriorityClass(t.obs.Roles)
}

func (t *TrainJob) CanDefaultManagedBy() bool {
	return t.Spec.ManagedBy == nil || *t.Spec.ManagedBy == trainjob.TrainerControllerName
}
func (t *TrainJob) ManagedBy() *string             { return t.Spec.ManagedBy }
func (t *TrainJob) SetManagedBy(managedBy *string) { t.Spec.ManagedBy = managedBy }
