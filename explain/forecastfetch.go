package explain

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Forecasts plays each of clusterQueues forward (Forecast) and returns the
// expected start of every TrainJob waiting in them, by "namespace/name".
// One list per kind across every namespace — Workloads, TrainJobs,
// LocalQueues — and each ClusterQueue's own reads, never a request per
// job: a ClusterQueue serves every namespace, and a job waits for the
// others' jobs too.
func (e *Explainer) Forecasts(ctx context.Context, clusterQueues []string) (map[string]Start, error) {
	var wls kueue.WorkloadList
	if err := e.Client.List(ctx, &wls); err != nil {
		return nil, fmt.Errorf("listing Workloads in every namespace (the ClusterQueue's jobs): %w", err)
	}
	var jobs trainjob.TrainJobList
	if err := e.Client.List(ctx, &jobs); err != nil {
		return nil, fmt.Errorf("listing TrainJobs in every namespace: %w", err)
	}
	var lqs kueue.LocalQueueList
	if err := e.Client.List(ctx, &lqs); err != nil {
		return nil, fmt.Errorf("listing LocalQueues in every namespace: %w", err)
	}
	leadsTo := map[string]string{}
	for _, lq := range lqs.Items {
		leadsTo[lq.Namespace+"/"+lq.Name] = string(lq.Spec.ClusterQueue)
	}
	byUID := map[types.UID]*trainjob.TrainJob{}
	for i := range jobs.Items {
		byUID[jobs.Items[i].UID] = &jobs.Items[i]
	}
	now := e.now()
	history := historyOf(wls.Items, byUID)
	out := map[string]Start{}
	for _, name := range clusterQueues {
		q, err := e.clusterQueue(ctx, name)
		if err != nil || q == nil {
			return nil, err
		}
		plan := Plan{Queue: q, Now: now, StrictFIFO: q.ClusterQueue.Spec.QueueingStrategy == kueue.StrictFIFO}
		var waiting []*kueue.Workload
		for i := range wls.Items {
			wl := &wls.Items[i]
			job := ownerOf(wl, byUID)
			switch {
			case apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
			case wl.Status.Admission != nil && string(wl.Status.Admission.ClusterQueue) == name &&
				apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved):
				r := Running{Job: jobName(wl, job), Uses: usesOf(wl.Status.Admission)}
				r.End, r.From = EndOf(job, wl, history, now)
				plan.Running = append(plan.Running, r)
			case wl.Status.Admission == nil && ptr.Deref(wl.Spec.Active, true) && leadsTo[wl.Namespace+"/"+string(wl.Spec.QueueName)] == name:
				waiting = append(waiting, wl)
			}
		}
		slices.SortStableFunc(waiting, kueueOrder)
		for _, wl := range waiting {
			job := ownerOf(wl, byUID)
			w := Waiting{Job: jobName(wl, job), Roles: rolesOf(wl)}
			w.Runs, w.From = runsFor(job, wl, history)
			plan.Waiting = append(plan.Waiting, w)
		}
		for k, v := range Forecast(plan) {
			out[k] = v
		}
	}
	return out, nil
}

// historyOf is how long the finished TrainJobs of each runtime ran.
func historyOf(wls []kueue.Workload, byUID map[types.UID]*trainjob.TrainJob) History {
	h := History{}
	for i := range wls {
		job := ownerOf(&wls[i], byUID)
		if job == nil {
			continue
		}
		if d, ok := RanFor(&wls[i]); ok {
			h.Add(runtimeKey(job), d)
		}
	}
	return h
}

// ownerOf is the TrainJob controlling wl; nil for another kind's.
func ownerOf(wl *kueue.Workload, byUID map[types.UID]*trainjob.TrainJob) *trainjob.TrainJob {
	if owner := metav1.GetControllerOfNoCopy(wl); owner != nil && owner.Kind == trainjob.GVK.Kind {
		return byUID[owner.UID]
	}
	return nil
}

// jobName names a Workload's job: its TrainJob's "namespace/name", or the
// Workload's own for another kind's.
func jobName(wl *kueue.Workload, job *trainjob.TrainJob) string {
	if job != nil {
		return job.Namespace + "/" + job.Name
	}
	return wl.Namespace + "/" + wl.Name
}

// usesOf is the quota an admission holds, per flavor.
func usesOf(adm *kueue.Admission) map[string]corev1.ResourceList {
	out := map[string]corev1.ResourceList{}
	for _, psa := range adm.PodSetAssignments {
		for r, f := range psa.Flavors {
			if q, ok := psa.ResourceUsage[r]; ok {
				out[string(f)] = quota.Add(out[string(f)], corev1.ResourceList{r: q})
			}
		}
	}
	return out
}

// rolesOf are a Workload's PodSets as roles, what Assign fits.
func rolesOf(wl *kueue.Workload) []podsets.Role {
	out := make([]podsets.Role, 0, len(wl.Spec.PodSets))
	for _, ps := range wl.Spec.PodSets {
		out = append(out, podsets.Role{Name: string(ps.Name), Replicas: 1, PodsPerReplica: ps.Count, Template: ps.Template})
	}
	return out
}

// kueueOrder is the order Kueue's queues pop in: higher effective
// priority first (a preemption-cost policy's boost included), then the
// earlier queue time (an evicted Workload queues again from its eviction).
func kueueOrder(a, b *kueue.Workload) int {
	pa := int64(ptr.Deref(a.Spec.Priority, 0)) + int64(preemptcost.BoostValue(a))
	pb := int64(ptr.Deref(b.Spec.Priority, 0)) + int64(preemptcost.BoostValue(b))
	return cmp.Or(cmp.Compare(pb, pa), queuedAt(a).Compare(queuedAt(b)), cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
}

func queuedAt(wl *kueue.Workload) time.Time {
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil {
		return c.LastTransitionTime.Time
	}
	return wl.CreationTimestamp.Time
}
