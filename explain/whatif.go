package explain

import (
	"context"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// expected is the job's expected start in q, played forward with every
// other job of the ClusterQueue; for a manifest not created (roles given),
// as if it were created now: its Workload, as Kueue would make it, queued
// behind every job of its priority already waiting.
func (e *Explainer) expected(ctx context.Context, q *forecast.Queue, job *trainjob.TrainJob, roles []podsets.Role) (*forecast.ExpectedStart, string) {
	s, err := e.Snapshot(ctx)
	if err != nil {
		return nil, err.Error()
	}
	if roles != nil {
		priority, err := e.priorityOf(ctx, job)
		if err != nil {
			return nil, err.Error()
		}
		tj, wl := whatIf(job, roles, priority, metav1.NewTime(e.now()))
		s.TrainJobs = append(s.TrainJobs, *tj)
		s.Workloads = append(s.Workloads, wl)
	}
	start, ok := e.ForecastsFrom(ctx, s, []string{q.ClusterQueue.Name})[job.Namespace+"/"+job.Name]
	if !ok {
		return nil, ""
	}
	return forecast.Expected(start, e.now()), ""
}

// whatIfUID stands for the UID of a job not created yet.
const whatIfUID = types.UID("not-created")

// whatIf is a job not created yet and the Workload Kueue's job framework
// would make of it were it created at now: its roles as PodSets, its
// LocalQueue, priority and maximum execution time from its labels.
func whatIf(job *trainjob.TrainJob, roles []podsets.Role, priority int32, now metav1.Time) (*trainjob.TrainJob, kueue.Workload) {
	tj := job.DeepCopy()
	tj.UID = whatIfUID
	wl := kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name, CreationTimestamp: now,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: trainjob.GVK.GroupVersion().String(), Kind: trainjob.GVK.Kind, Name: job.Name, UID: whatIfUID, Controller: ptr.To(true)}}},
		Spec: kueue.WorkloadSpec{QueueName: jobframework.QueueNameForObject(job), Priority: ptr.To(priority)}}
	if v, err := strconv.ParseInt(job.Labels[constants.MaxExecTimeSecondsLabel], 10, 32); err == nil && v > 0 {
		wl.Spec.MaximumExecutionTimeSeconds = ptr.To(int32(v))
	}
	for _, r := range roles {
		wl.Spec.PodSets = append(wl.Spec.PodSets, kueue.PodSet{Name: kueue.NewPodSetReference(r.Name), Count: r.Count(), Template: r.Template})
	}
	return tj, wl
}

// priorityOf is the priority Kueue would give the job: its
// WorkloadPriorityClass's value, 0 without one.
func (e *Explainer) priorityOf(ctx context.Context, job *trainjob.TrainJob) (int32, error) {
	name := job.Labels[constants.WorkloadPriorityClassLabel]
	if name == "" {
		return 0, nil
	}
	wpc := &kueue.WorkloadPriorityClass{}
	if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, wpc); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	return wpc.Value, nil
}
