package webhook

import (
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// provenJobs remembers, by UID, the Jobs whose lineage was proven a
// TrainJob's: a 1,000-pod gang's pods are one Job's (or a few), so its
// pods after the first cost no read of the Job and its JobSet on the
// create path, where three live reads a pod ran past the webhook's
// timeout at scale. A UID is never reused, and what is kept of a Job is
// what cannot change under that UID: its controller (the proof), its
// replicatedJob label and its pod template's scheduling gates (what
// the pod webhook reads). The TrainJob is read again at every pod, by its
// UID: one deleted and made again under the name proves nothing.
type provenJobs struct {
	mu    sync.Mutex
	max   int
	byUID map[types.UID]provenJob
}

// provenJob is a Job proven the TrainJob's of that name and UID.
type provenJob struct {
	job         *batchv1.Job
	trainJob    string
	trainJobUID types.UID
}

// newProvenJobs remembers up to max Jobs, forgetting all at once beyond:
// the Jobs creating pods at a time are few.
func newProvenJobs(max int) *provenJobs {
	return &provenJobs{max: max, byUID: map[types.UID]provenJob{}}
}

func (p *provenJobs) get(uid types.UID) (provenJob, bool) {
	if p == nil {
		return provenJob{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	j, ok := p.byUID[uid]
	return j, ok
}

// put remembers job, proven tj's, keeping only what the pod webhook reads.
func (p *provenJobs) put(job *batchv1.Job, tj *trainjob.TrainJob) {
	if p == nil {
		return
	}
	slim := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name, UID: job.UID,
		Labels: map[string]string{jobsetapi.ReplicatedJobNameKey: job.Labels[jobsetapi.ReplicatedJobNameKey]}}}
	slim.Spec.Template.Spec.SchedulingGates = job.Spec.Template.Spec.SchedulingGates
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.byUID) >= p.max {
		clear(p.byUID)
	}
	p.byUID[job.UID] = provenJob{job: slim, trainJob: tj.Name, trainJobUID: tj.UID}
}
