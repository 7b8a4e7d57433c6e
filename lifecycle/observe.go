package lifecycle

import (
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Observed is what the state is read from.
type Observed struct {
	Job *trainjob.TrainJob
	// Workload is the job's (jobworkload.Of); nil when it has none yet.
	Workload *kueue.Workload
	// ManageJobsWithoutQueueName: Kueue queues jobs without a queue name
	// too (its configuration).
	ManageJobsWithoutQueueName bool
}

// Status is one job's State, with what a reader says of it.
type Status struct {
	State State
	// Reason is a CamelCase word for why, stable for machines (Kueue's or
	// Trainer's own where they give one: Preempted, PodsReadyTimeout, …).
	Reason string
	// Detail says it in a few words, for a table's column ("" where the
	// state says it all): the runtime waited for, the eviction's reason,
	// the worker a job runs on.
	Detail string
	// Message says it for people, naming the fix where there is one.
	Message string
	// LocalQueue the job names; ClusterQueue the one that reserved its
	// quota ("" before).
	LocalQueue, ClusterQueue string
	// Worker is the MultiKueue worker cluster a dispatched job runs on.
	Worker string
	// NoticeUntil: an Evicted job is in its preemption notice until then
	// (zero when it is not).
	NoticeUntil time.Time
}

// Reasons of ours (the others are Kueue's and Trainer's).
const (
	ReasonNoQueueName      = "NoQueueName"
	ReasonManagedElsewhere = "ManagedElsewhere"
	ReasonNoWorkloadYet    = "NoWorkloadYet"
	ReasonPending          = "Pending"
	ReasonRuntimeHold      = "RuntimeUnavailable"
	ReasonPolicyHold       = "StartRefusedByPolicy"
	ReasonDeactivated      = "Deactivated"
	ReasonChecksPending    = "AdmissionChecksPending"
	ReasonAdmitted         = "Admitted"
	ReasonStarted          = "Started"
	ReasonOnWorker         = "RunningOnWorker"
	// ReasonRunningUnadmitted: started while its Workload holds no
	// admission.
	ReasonRunningUnadmitted = "RunningWithoutAdmission"
	// The reasons of the hold on a Workload MultiKueue dispatched to this
	// worker (package multikueue holds it with one of them): a TrainJob of
	// the job's name is in the way; the worker refuses the copy.
	ReasonNameTakenOnWorker   = "TrainJobNameTakenOnWorker"
	ReasonCopyRefusedOnWorker = "TrainJobCopyRefusedOnWorker"
)

// Of is the job's state as o shows it. Trainer's verdict comes first (a
// finished job is finished whatever its Workload says), then who manages
// the job, then the Workload: finished, held (by us, by MultiKueue's
// worker hold, by someone else), evicted, admitted, reserved, requeued,
// queued.
func Of(o Observed) Status {
	job, wl := o.Job, o.Workload
	s := Status{LocalQueue: job.Labels[constants.QueueLabel]}
	if c := trainerVerdict(job); c != nil {
		return finished(s, c.Type == trainer.TrainJobComplete, c.Reason, c.Message)
	}
	if job.Runner() == trainjob.RunElsewhere {
		return with(s, NotQueued, ReasonManagedElsewhere, "managed by "+ptr.Deref(job.Spec.ManagedBy, ""), "spec.managedBy is "+ptr.Deref(job.Spec.ManagedBy, "")+": that controller runs the job, Kueue does not queue it")
	}
	if wl == nil {
		if s.LocalQueue == "" && !o.ManageJobsWithoutQueueName {
			return with(s, NotQueued, ReasonNoQueueName, "no "+constants.QueueLabel+" label", "the job has no "+constants.QueueLabel+" label, so Kueue does not manage it")
		}
		return with(s, Queued, ReasonNoWorkloadYet, "", "queued; its Workload is not created yet")
	}
	if s.LocalQueue == "" {
		s.LocalQueue = string(wl.Spec.QueueName)
	}
	if adm := wl.Status.Admission; adm != nil {
		s.ClusterQueue = string(adm.ClusterQueue)
	}
	s.Worker = ptr.Deref(wl.Status.ClusterName, "")
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c != nil && c.Status == metav1.ConditionTrue {
		return finished(s, c.Reason == kueue.WorkloadFinishedReasonSucceeded, c.Reason, c.Message)
	}
	if st, held := heldState(wl); held {
		return st.on(s)
	}
	reserved := apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		if n, ok := preemptcost.NoticeOn(wl); ok && reserved {
			s.NoticeUntil = n.Until
			until := n.Until.UTC().Format(time.RFC3339)
			return with(s, Evicted, c.Reason, c.Reason+", notice until "+until,
				"evicted ("+c.Message+"), in its preemption notice until "+until+": it runs on to checkpoint, and is stopped at its first checkpoint reported after the eviction, or then")
		}
		if reserved {
			return with(s, Evicted, c.Reason, c.Reason, "evicted, being stopped: "+c.Message)
		}
		return with(s, Requeued, c.Reason, c.Reason, "queued again after its eviction: "+c.Message)
	}
	switch admitted := apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted); {
	case admitted && job.Runner() == trainjob.RunRemotely && s.Worker != "":
		return with(s, Running, ReasonOnWorker, "on worker cluster "+s.Worker, fmt.Sprintf("admitted by ClusterQueue %s, running on worker cluster %s", s.ClusterQueue, s.Worker))
	case admitted && !job.Suspended():
		return with(s, Running, ReasonStarted, "", "admitted by ClusterQueue "+s.ClusterQueue+", started")
	case admitted:
		return with(s, Admitted, ReasonAdmitted, "", "admitted by ClusterQueue "+s.ClusterQueue+", starting")
	case !job.Suspended() && job.Runner() == trainjob.RunLocally:
		// Started, yet its Workload holds no admission: in a switch of
		// integrations, or started by someone else. Kueue's job framework
		// stops such a job.
		return with(s, Running, ReasonRunningUnadmitted, "without admission", "running while its Workload holds no admission: Kueue's job framework stops it and queues it again")
	case reserved:
		return with(s, QuotaReserved, ReasonChecksPending, "admission checks: "+checks(wl.Status.AdmissionChecks), fmt.Sprintf("quota reserved in ClusterQueue %s; waiting for admission checks: %s", s.ClusterQueue, checks(wl.Status.AdmissionChecks)))
	}
	msg := "waiting for quota on LocalQueue " + s.LocalQueue
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil && c.Message != "" {
		msg += ": " + c.Message
	}
	if preemptcost.Preemptions(wl) > 0 {
		return with(s, Requeued, kueue.WorkloadEvictedByPreemption, kueue.WorkloadEvictedByPreemption, "queued again after its preemption; "+msg)
	}
	return with(s, Queued, ReasonPending, "", msg)
}

// held is a hold's state, reason and words.
type held struct {
	state                   State
	reason, detail, message string
}

func (h held) on(s Status) Status { return with(s, h.state, h.reason, h.detail, h.message) }

// heldState reads a hold from wl: ours (runtime, policy; the Workload
// deactivated), a MultiKueue worker's (Requeued false with a reason of
// ours), or a deactivation by someone else.
func heldState(wl *kueue.Workload) (held, bool) {
	if !ptr.Deref(wl.Spec.Active, true) {
		if rt, ok := wl.Annotations[names.HeldForRuntimeAnnotation]; ok {
			return held{WaitingForRuntime, ReasonRuntimeHold, rt, fmt.Sprintf("held out of the queue by trainjob-kueue: the job can't start from %s (it does not exist, or was edited since Trainer built the job's JobSet; the job's HeldForRuntime or JobSetOutOfDate event says which); queued again once it can", rt)}, true
		}
		if _, ok := wl.Annotations[names.HeldByPolicyAnnotation]; ok {
			policy, attempt := "a ValidatingAdmissionPolicy", ""
			if h, ok := names.PolicyHoldOf(wl.Annotations); ok && h.Policy != "" {
				attempt = fmt.Sprintf(" (refusal %d, since %s)", h.Attempt, h.Since.Format(time.RFC3339))
				policy = fmt.Sprintf("ValidatingAdmissionPolicy %s", h.Policy)
			}
			return held{HeldByPolicy, ReasonPolicyHold, policy, "held out of the queue by trainjob-kueue: " + policy + " refused the job's start" + attempt + " (the job's StartRefusedByPolicy event has the policy's words); queued again after a backoff, it starts once the policy lets it"}, true
		}
		return held{Inactive, ReasonDeactivated, "Workload deactivated", fmt.Sprintf("Workload %s has spec.active=false, set by someone other than trainjob-kueue: Kueue does not queue it until it is set true again", wl.Name)}, true
	}
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c != nil && c.Status == metav1.ConditionFalse &&
		(c.Reason == ReasonNameTakenOnWorker || c.Reason == ReasonCopyRefusedOnWorker) {
		return held{HeldOnWorker, c.Reason, c.Reason, "held on this MultiKueue worker: " + c.Message}, true
	}
	return held{}, false
}

func finished(s Status, success bool, reason, msg string) Status {
	word, st := "finished", Finished
	if !success {
		word, st = "failed", Failed
	}
	return with(s, st, string(st), strings.TrimSpace(msg), strings.TrimSpace(fmt.Sprintf("%s (%s): %s", word, reason, msg)))
}

// trainerVerdict is Trainer's Complete or Failed condition when true.
func trainerVerdict(job *trainjob.TrainJob) *metav1.Condition {
	for _, typ := range []string{trainer.TrainJobComplete, trainer.TrainJobFailed} {
		if c := apimeta.FindStatusCondition(job.Status.Conditions, typ); c != nil && c.Status == metav1.ConditionTrue {
			return c
		}
	}
	return nil
}

func with(s Status, st State, reason, detail, msg string) Status {
	s.State, s.Reason, s.Detail, s.Message = st, reason, detail, msg
	if s.Reason == "" {
		s.Reason = string(st)
	}
	return s
}

func checks(cs []kueue.AdmissionCheckState) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s", c.Name, c.State))
	}
	if len(parts) == 0 {
		return "none listed yet"
	}
	return strings.Join(parts, ", ")
}
