package migrate

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Decision is what the switch does to one TrainJob.
type Decision string

const (
	// Adopted: its Workload is kept as it is (same UID, same place,
	// quota counted once); a running job keeps running.
	Adopted Decision = "adopted"
	// AdoptedMendedAtNextStop: adopted; the built-in integration's entries
	// stay on the job, and its Workload as that integration wrote it, until
	// its next stop removes them and corrects it.
	AdoptedMendedAtNextStop Decision = "adopted, mended at its next stop"
	// CorrectedInPlace: a queued job whose Workload's PodSets differ from
	// what Trainer will run: the Workload is updated in place and keeps
	// its place in the queue.
	CorrectedInPlace Decision = "Workload corrected in place"
	// Recreated: a job with quota reserved but not started whose PodSets
	// differ: its Workload is deleted and created again, losing its place.
	Recreated Decision = "re-created, losing its place"
	// Stopped: a running job Kueue's job framework stops and queues again
	// from scratch (one running without a quota reservation).
	Stopped Decision = "STOPPED and re-queued"
	// NewWorkload: a queued job without a Workload gets one.
	NewWorkload Decision = "gets a Workload"
	// Unknown: what trainjob-kueue would compute for the job cannot be
	// told (its runtime is missing or unreadable).
	Unknown Decision = "unknown"
	// LeftAlone: finished, not queued, or another controller's.
	LeftAlone Decision = "left alone"
)

// Job is one TrainJob as the check sees it.
type Job struct {
	Job *trainjob.TrainJob
	// Workload is the job's Workload; nil when it has none.
	Workload *kueue.Workload
	// PodSets are what trainjob-kueue computes for the job, with the
	// Workload's defaults applied; Err says why they could not be.
	PodSets []kueue.PodSet
	Err     error
}

// Verdict is the check's answer for one job.
type Verdict struct {
	Namespace, Name string
	// State is the job's lifecycle state now.
	State    lifecycle.State
	Decision Decision
	Reason   string
}

// StopsARunningJob: the verdict means a running job would be stopped.
func (v Verdict) StopsARunningJob() bool { return v.Decision == Stopped }

// Judge decides what the switch does to j, in a cluster whose Trainer has
// shape s, as trainjob-kueue's PodSets and Kueue's job framework will:
// a job whose Workload holds a quota reservation reports the reserved
// PodSets while it runs, and before it starts while it asks for the same
// pods in the same places (quota.KeepsReservation), so Kueue keeps its
// Workload; a difference from what Trainer runs is corrected at its next
// stop or requeue. Other jobs report what trainjob-kueue computes.
//
// jobSetIntegration: Kueue's own JobSet integration is on (or not known to
// be off), which queues again the JobSet of a job whose spec.labels Kueue
// v0.16 copied the queue label into.
func Judge(j Job, s shape.Shape, jobSetIntegration bool) Verdict {
	job := j.Job
	v := Verdict{Namespace: job.Namespace, Name: job.Name, State: stateOf(job, j.Workload)}
	if v.Decision, v.Reason = leftAlone(j, v.State); v.Decision != "" {
		return v
	}
	running := !job.Suspended()
	reserved := workload.HasQuotaReservation(j.Workload)
	admitted := apimeta.IsStatusConditionTrue(j.Workload.Status.Conditions, kueue.WorkloadAdmitted)
	stored := j.Workload.Spec.PodSets
	switch {
	case running && !reserved:
		v.Decision, v.Reason = Stopped, "it runs while its Workload holds no quota reservation: Kueue's job framework stops such a job"
		return v
	case running && job.QueueLabelCopied() && jobSetIntegration:
		v.Decision, v.Reason = Stopped, "Kueue v0.16's built-in integration copied the queue label into spec.labels, so the running JobSet carries it: with Kueue's jobset.x-k8s.io/jobset integration on, Kueue queues that JobSet anew once the TrainJob integration is off, and suspends it. Let the job finish first, or turn Kueue's JobSet integration off for the switch"
		return v
	case j.Err != nil && !reserved:
		v.Decision, v.Reason = Unknown, fmt.Sprintf("it waits for its runtime: %v", j.Err)
		return v
	case j.Err != nil:
		v.Decision, v.Reason = Adopted, fmt.Sprintf("it keeps its reservation (its runtime cannot be read now: %v)", j.Err)
		return v
	}
	reported := j.PodSets
	if reserved && quota.KeepsReservation(stored, j.PodSets, running) {
		reported = stored
	}
	if !quota.Equivalent(reported, stored, admitted) {
		v.Decision, v.Reason = CorrectedInPlace, quota.Difference(stored, reported, admitted)+": corrected in place, it keeps its place"
		if reserved {
			v.Decision, v.Reason = Recreated, quota.Difference(stored, reported, admitted)
		}
		return v
	}
	var mend []string
	if diff := quota.Difference(stored, j.PodSets, admitted); diff != "" {
		mend = append(mend, "its Workload differs from what Trainer runs ("+diff+"); it keeps it until its next stop or requeue corrects it")
	}
	switch {
	case job.QueueLabelCopied() && running:
		mend = append(mend, "its JobSet carries the queue label Kueue v0.16 copied into spec.labels: keep Kueue's JobSet integration off until the job has finished")
	case job.QueueLabelCopied():
		mend = append(mend, "the queue label Kueue v0.16 copied into spec.labels goes while trainjob-kueue stands by, before Kueue's JobSet integration could queue its JobSet")
	}
	if marked := s.InTreeMarked(job); len(marked) > 0 {
		mend = append(mend, "the built-in integration's entries ("+strings.Join(marked, ", ")+") stay until its next stop removes them")
	}
	if len(mend) == 0 {
		v.Decision, v.Reason = Adopted, "its Workload's PodSets are what trainjob-kueue computes"
		return v
	}
	v.Decision, v.Reason = AdoptedMendedAtNextStop, strings.Join(mend, "; ")
	return v
}

// leftAlone: the jobs the switch leaves as they are, or queues afresh.
func leftAlone(j Job, state lifecycle.State) (Decision, string) {
	switch {
	case state.Done():
		return LeftAlone, "finished"
	case j.Job.Runner() != trainjob.RunLocally:
		return LeftAlone, "spec.managedBy names " + j.Job.Runner().String() + ", which runs it"
	case j.Workload == nil && j.Job.Labels[constants.QueueLabel] == "":
		return LeftAlone, "not queued (no kueue.x-k8s.io/queue-name)"
	case j.Workload == nil:
		return NewWorkload, "it has no Workload yet: queued from now on"
	}
	return "", ""
}

// stateOf is the job's lifecycle state, as list and explain say it.
func stateOf(job *trainjob.TrainJob, wl *kueue.Workload) lifecycle.State {
	return lifecycle.Of(lifecycle.Observed{Job: job, Workload: wl}).State
}
