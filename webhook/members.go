package webhook

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// PodGroup membership, proven: kube-scheduler counts
// every pod that names a PodGroup in spec.schedulingGroup as a member of
// its gang, whoever made the pod. A pod that is not the job's, naming the
// group of a job whose room is short, would meet the gang's quorum with
// the job's pods that fit, and the job would start some but not all of its
// pods: the half-start the gang exists to prevent. So a pod may name a
// group of ours only when its owners, hop by hop by UID (lineage), prove
// it a pod of the TrainJob that controls the group, of a role of the
// group's wave; and, since a group's name is computable before the group
// exists, a name our start would give one of a TrainJob of the namespace
// only when it is that job's pod. Pods naming other groups are none of our
// business.
//
// config/webhook/selectors.yaml sends the webhook every pod that names a
// group, whatever its labels, on its create (spec.schedulingGroup is
// immutable).

// fieldSchedulingGroup is the field a refusal names.
const fieldSchedulingGroup = "spec.schedulingGroup.podGroupName"

// namedGroup is the PodGroup pod names, or "".
func namedGroup(pod *corev1.Pod) string {
	if pod.Spec.SchedulingGroup == nil {
		return ""
	}
	return ptr.Deref(pod.Spec.SchedulingGroup.PodGroupName, "")
}

// mayName refuses pod, which names group, unless it may: the group is not
// ours (and no name of ours), or the pod is proven a pod of tj (nil: not
// proven a TrainJob's) through job, of the group's wave.
func (p *Pods) mayName(ctx context.Context, pod *corev1.Pod, group string, tj *trainjob.TrainJob, job *batchv1.Job) error {
	if tj != nil && p.lineage.cachedMember(ctx, pod.Namespace, group, tj.UID, job.Labels[jobsetapi.ReplicatedJobNameKey]) {
		return nil
	}
	pg := newWorkloadAPIGroup()
	err := p.lineage.live.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: group}, pg)
	switch {
	case meta.IsNoMatchError(err):
		// The API server serves no Workload API PodGroups: none is ours.
		return nil
	case apierrors.IsNotFound(err):
		return p.mayNameUnmade(ctx, pod, group, tj)
	case err != nil:
		return fmt.Errorf("%s: reading PodGroup %s (scheduling.k8s.io/v1beta1) to tell whose it is: %w", fieldSchedulingGroup, group, err)
	}
	owner, ours := gang.WorkloadAPIOwned(pg)
	if !ours {
		return nil
	}
	if tj == nil || tj.UID != owner.UID {
		return notAMember(group, owner.Name)
	}
	if err := gang.WorkloadAPIGroupFor(pg, tj.UID, job.Labels[jobsetapi.ReplicatedJobNameKey]); err != nil {
		return fmt.Errorf("%s: %w; the pod is not created outside its gang", fieldSchedulingGroup, err)
	}
	return nil
}

// mayNameUnmade refuses pod, which names group before it exists, when the
// name is one our start may give a group of a TrainJob of the namespace
// that pod is not proven a pod of (tj).
func (p *Pods) mayNameUnmade(ctx context.Context, pod *corev1.Pod, group string, tj *trainjob.TrainJob) error {
	jobs := &trainjob.TrainJobList{}
	if err := p.lineage.cached.List(ctx, jobs, client.InNamespace(pod.Namespace)); err != nil {
		return fmt.Errorf("%s: listing the namespace's TrainJobs to tell whose name %s is: %w", fieldSchedulingGroup, group, err)
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if gang.WorkloadAPINameOf(j.Name, group) && (tj == nil || tj.UID != j.UID) {
			return notAMember(group, j.Name)
		}
	}
	return nil
}

// notAMember is the refusal of a pod naming the group of TrainJob job
// without being proven its pod.
func notAMember(group, job string) error {
	return fmt.Errorf("%s: PodGroup %s is the gang of TrainJob %s, made by trainjob-kueue; only that job's own pods (Pod → Job → JobSet → TrainJob, each by UID) may name it. Remove spec.schedulingGroup, or name a PodGroup of your own", fieldSchedulingGroup, group, job)
}
