package integration

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// gangProgress is how far each role of the job got, for sizing its gangs:
// the TrainJob's jobsStatus, and, for a job Kueue evicted before, the pods
// of its Jobs not yet complete that already succeeded. Those Jobs never
// create them again: a job re-admitted after some indexes completed runs
// only the rest, and a gang sized for all of them waits for ever while the
// job holds its quota (kueue#10487's class).
func (d *deps) gangProgress(ctx context.Context, job *trainjob.TrainJob, o *observed) (map[string]quota.Progress, error) {
	progress := progressOf(o)
	if !evictedBefore(o.workload) {
		// A job's first run starts every pod; nothing to read.
		return progress, nil
	}
	done, err := d.podsDone(ctx, job)
	if err != nil {
		return nil, err
	}
	for role, n := range done {
		p := progress[role]
		p.PodsDone = n
		progress[role] = p
	}
	return progress, nil
}

// evictedBefore: Kueue evicted the Workload at least once (preempted,
// PodsReady timeout, …), so the job may have run pods before this
// admission.
func evictedBefore(wl *kueue.Workload) bool {
	return wl != nil && wl.Status.SchedulingStats != nil && len(wl.Status.SchedulingStats.Evictions) > 0
}

// podsDone counts, per role, the succeeded pods of the job's child Jobs
// that are not complete, from the API server: the manager caches no Jobs
// (every batch Job of the cluster would be held for the few gangs
// re-admitted), and this is read only for those.
func (d *deps) podsDone(ctx context.Context, job *trainjob.TrainJob) (map[string]int32, error) {
	var jobs batchv1.JobList
	if err := d.apiReader.List(ctx, &jobs, client.InNamespace(job.Namespace), client.MatchingLabels{jobsetapi.JobSetNameKey: job.Name}); err != nil {
		return nil, fmt.Errorf("listing the Jobs of TrainJob %s/%s for the pods that already succeeded: %w", job.Namespace, job.Name, err)
	}
	done := map[string]int32{}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if owner := metav1.GetControllerOfNoCopy(j); owner == nil || owner.Kind != "JobSet" || owner.Name != job.Name {
			continue
		}
		if jobComplete(j) {
			// Counted whole by jobsStatus.
			continue
		}
		if n := j.Status.Succeeded; n > 0 {
			done[j.Labels[jobsetapi.ReplicatedJobNameKey]] += n
		}
	}
	return done, nil
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
