package migrate

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/quota"
)

// The switch's directions (migrate --check --to).
const (
	// ToOurs: from Kueue's built-in TrainJob integration to trainjob-kueue.
	ToOurs = "ours"
	// ToInTree: the way back, from trainjob-kueue to Kueue's built-in
	// integration.
	ToInTree = "intree"
)

// JudgeWayBack decides what the way back does to j, whose PodSets are
// what Kueue's built-in integration computes for it (InTreePodSets): from
// the live (Cluster)TrainingRuntime, with no runtime snapshot and no rule
// that keeps a reservation. Kueue's job framework keeps a job's Workload
// when those PodSets are equivalent to the stored ones; otherwise it stops
// a running job (NoMatchingWorkload) and queues it again, re-creates the
// Workload of one admitted but not started (losing its place), and
// corrects a queued one in place.
func JudgeWayBack(j Job) Verdict {
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
	case apierrors.IsForbidden(j.Err) && !strings.Contains(j.Err.Error(), "admission webhook"):
		// RBAC's refusal; a webhook's denial is Forbidden too, and says
		// what it refused itself (below).
		// Kueue's integration defaults its PodSets by a dry-run create
		// of a Workload: here it runs as the checking user, not as Kueue.
		v.Decision, v.Reason = Unknown, fmt.Sprintf("this check computes its PodSets as Kueue's built-in integration does, by a dry-run create of a Workload (nothing is stored), and the API server refused it (%v): run the check as a user who may create workloads.kueue.x-k8s.io in namespace %s", j.Err, job.Namespace)
		return v
	case j.Err != nil:
		v.Decision, v.Reason = Unknown, fmt.Sprintf("Kueue's built-in integration cannot compute its PodSets (%v): it retries, and the job keeps its Workload until it can", j.Err)
		return v
	case quota.Equivalent(j.PodSets, stored, admitted):
		v.Decision, v.Reason = Adopted, "the PodSets Kueue's built-in integration computes from "+runtimeName(j)+" are its Workload's"
		return v
	}
	diff := quota.Difference(stored, j.PodSets, admitted)
	switch {
	case running:
		v.Decision, v.Reason = Stopped, fmt.Sprintf("Kueue's built-in integration computes its PodSets from %s as it is now, and they differ from what its Workload booked (%s): it stops the job (NoMatchingWorkload) and queues it again. "+
			"The runtime was edited since the job started (or, on Trainer v2.3, differs from the job's snapshot of it); put it back as the job was started, or switch once the job has finished", runtimeName(j), diff)
	case reserved:
		v.Decision, v.Reason = Recreated, diff+" (from "+runtimeName(j)+" as it is now)"
	default:
		v.Decision, v.Reason = CorrectedInPlace, diff+": corrected in place from "+runtimeName(j)+", it keeps its place"
	}
	return v
}

// runtimeName names the job's runtime as an admin finds it.
func runtimeName(j Job) string {
	ref := j.Job.Spec.RuntimeRef
	kind := "TrainingRuntime"
	if ref.Kind != nil && *ref.Kind != "" {
		kind = *ref.Kind
	}
	if kind == "ClusterTrainingRuntime" {
		return kind + " " + ref.Name
	}
	return kind + " " + j.Job.Namespace + "/" + ref.Name
}
