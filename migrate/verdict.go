package migrate

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	kueueequality "sigs.k8s.io/kueue/pkg/util/equality"

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
	// stay on the running job until its next stop removes them.
	AdoptedMendedAtNextStop Decision = "adopted, mended at its next stop"
	// CorrectedInPlace: a queued job whose Workload's PodSets differ from
	// what Trainer will run: the Workload is updated in place and keeps
	// its place in the queue.
	CorrectedInPlace Decision = "Workload corrected in place"
	// Recreated: a job with quota reserved but not started whose PodSets
	// differ: its Workload is deleted and created again, losing its place.
	Recreated Decision = "re-created, losing its place"
	// Stopped: a running job whose PodSets differ: Kueue's job framework
	// stops it (NoMatchingWorkload) and queues it again from scratch.
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
	// State is the job's state now: finished, running, admitted, queued.
	State    string
	Decision Decision
	Reason   string
}

// StopsARunningJob: the verdict means a running job would be stopped, or
// cannot be told not to be.
func (v Verdict) StopsARunningJob() bool {
	return v.Decision == Stopped || v.Decision == Unknown && v.State == "running"
}

// Judge decides what the switch does to j, in a cluster whose Trainer has
// shape s.
func Judge(j Job, s shape.Shape) Verdict {
	job := j.Job
	v := Verdict{Namespace: job.Namespace, Name: job.Name, State: stateOf(job, j.Workload)}
	switch {
	case v.State == "finished":
		v.Decision, v.Reason = LeftAlone, "finished"
		return v
	case job.Runner() != trainjob.RunLocally:
		v.Decision, v.Reason = LeftAlone, "spec.managedBy names "+job.Runner().String()+", which runs it"
		return v
	case j.Workload == nil && job.Labels[constants.QueueLabel] == "":
		v.Decision, v.Reason = LeftAlone, "not queued (no kueue.x-k8s.io/queue-name)"
		return v
	case j.Workload == nil:
		v.Decision, v.Reason = NewWorkload, "it has no Workload yet: queued from now on"
		return v
	case j.Err != nil:
		v.Decision, v.Reason = Unknown, fmt.Sprintf("its PodSets cannot be computed: %v", j.Err)
		return v
	}
	admitted := apimeta.IsStatusConditionTrue(j.Workload.Status.Conditions, kueue.WorkloadAdmitted)
	var opts []kueueequality.ComparePodSetsOption
	if admitted {
		opts = append(opts, kueueequality.WithIgnoreTolerations())
	}
	if kueueequality.ComparePodSetSlices(j.PodSets, j.Workload.Spec.PodSets, opts...) {
		v.Decision, v.Reason = Adopted, "its Workload's PodSets are what trainjob-kueue computes"
		if marked := s.InTreeMarked(job); len(marked) > 0 {
			v.Decision = AdoptedMendedAtNextStop
			v.Reason += "; the built-in integration's entries (" + strings.Join(marked, ", ") + ") stay until its next stop removes them"
		}
		return v
	}
	diff := podSetsDiff(j.Workload.Spec.PodSets, j.PodSets, !admitted)
	switch {
	case !job.Suspended():
		v.Decision = Stopped
	case j.Workload.Status.Admission != nil:
		v.Decision = Recreated
	default:
		v.Decision = CorrectedInPlace
	}
	v.Reason = diff
	return v
}

// stateOf is the job's state as an admin names it.
func stateOf(job *trainjob.TrainJob, wl *kueue.Workload) string {
	if _, _, finished := job.Finished(); finished {
		return "finished"
	}
	switch {
	case !job.Suspended():
		return "running"
	case wl != nil && wl.Status.Admission != nil:
		return "admitted"
	}
	return "queued"
}

// podSetsDiff names the first difference Kueue's comparison finds between
// the Workload's PodSets (stored) and trainjob-kueue's (computed).
func podSetsDiff(stored, computed []kueue.PodSet, tolerations bool) string {
	if len(stored) != len(computed) {
		return fmt.Sprintf("its Workload has %d PodSets (%s), trainjob-kueue computes %d (%s)", len(stored), podSetNames(stored), len(computed), podSetNames(computed))
	}
	for i := range stored {
		a, b := &stored[i], &computed[i]
		where := fmt.Sprintf("PodSet %d (%s)", i, a.Name)
		if a.Name != b.Name {
			where = fmt.Sprintf("PodSet %d (%s in its Workload, %s computed)", i, a.Name, b.Name)
		}
		switch {
		case a.Count != b.Count:
			return fmt.Sprintf("%s: %d pods in its Workload, %d by Trainer's rules", where, a.Count, b.Count)
		case !equality.Semantic.DeepEqual(a.MinCount, b.MinCount):
			return where + ": minCount differs"
		case !equality.Semantic.DeepEqual(a.Template.Spec.InitContainers, b.Template.Spec.InitContainers):
			return where + ": init containers differ" + requestsDiff(a.Template.Spec.InitContainers, b.Template.Spec.InitContainers)
		case !equality.Semantic.DeepEqual(a.Template.Spec.Containers, b.Template.Spec.Containers):
			return where + ": containers differ" + requestsDiff(a.Template.Spec.Containers, b.Template.Spec.Containers)
		case tolerations && !equality.Semantic.DeepEqual(a.Template.Spec.Tolerations, b.Template.Spec.Tolerations):
			return where + ": tolerations differ"
		}
	}
	return "its PodSets differ"
}

func podSetNames(ps []kueue.PodSet) string {
	names := make([]string, len(ps))
	for i := range ps {
		names[i] = string(ps[i].Name)
	}
	return strings.Join(names, ", ")
}

// requestsDiff says how the containers' requests differ, when they do.
func requestsDiff(stored, computed []corev1.Container) string {
	for i := range min(len(stored), len(computed)) {
		a, b := stored[i].Resources.Requests, computed[i].Resources.Requests
		if !equality.Semantic.DeepEqual(a, b) {
			return fmt.Sprintf(" (container %s requests %s in its Workload, %s by Trainer's rules)", stored[i].Name, quantities(a), quantities(b))
		}
	}
	return ""
}

func quantities(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(l))
	for name, q := range l {
		parts = append(parts, string(name)+"="+q.String())
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}
