package explain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/paging"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Snapshot is what a forecast reads of every namespace: a ClusterQueue
// serves them all, and a job waits for the other namespaces' jobs too.
type Snapshot struct {
	Workloads []kueue.Workload
	TrainJobs []trainjob.TrainJob
	// LocalQueues by "namespace/name".
	LocalQueues map[string]*kueue.LocalQueue
}

// Snapshot lists Workloads, TrainJobs and LocalQueues in every namespace,
// page by page, the kinds side by side: one list per kind, never a
// request per job.
func (e *Explainer) Snapshot(ctx context.Context) (Snapshot, error) {
	s := Snapshot{LocalQueues: map[string]*kueue.LocalQueue{}}
	var g paging.SideBySide
	g.Go(func() error {
		var err error
		if s.Workloads, err = paging.Items(ctx, e.Client, func() *kueue.WorkloadList { return &kueue.WorkloadList{} },
			func(l *kueue.WorkloadList) []kueue.Workload { return l.Items }); err != nil {
			return fmt.Errorf("listing Workloads in every namespace (the ClusterQueues' jobs): %w", err)
		}
		return nil
	})
	g.Go(func() error {
		var err error
		if s.TrainJobs, err = paging.Items(ctx, e.Client, func() *trainjob.TrainJobList { return &trainjob.TrainJobList{} },
			func(l *trainjob.TrainJobList) []trainjob.TrainJob { return l.Items }); err != nil {
			return fmt.Errorf("listing TrainJobs in every namespace: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		if err := paging.List(ctx, e.Client, func() *kueue.LocalQueueList { return &kueue.LocalQueueList{} },
			func(l *kueue.LocalQueueList) {
				for i := range l.Items {
					s.LocalQueues[l.Items[i].Namespace+"/"+l.Items[i].Name] = &l.Items[i]
				}
			}); err != nil {
			return fmt.Errorf("listing LocalQueues in every namespace: %w", err)
		}
		return nil
	})
	return s, g.Wait()
}

// Forecasts is ForecastsFrom a fresh Snapshot.
func (e *Explainer) Forecasts(ctx context.Context, clusterQueues []string) (map[string]forecast.Start, error) {
	s, err := e.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return e.ForecastsFrom(ctx, s, clusterQueues), nil
}

// ForecastsFrom plays each of clusterQueues forward (Forecast) and returns
// the expected start of every job waiting in them, by "namespace/name".
// A ClusterQueue that is missing, inactive or can't be read, or a
// LocalQueue that is inactive, takes nothing from the others: its jobs'
// starts are unknown, saying why, and every other job keeps its own.
func (e *Explainer) ForecastsFrom(ctx context.Context, s Snapshot, clusterQueues []string) map[string]forecast.Start {
	byUID := make(map[types.UID]*trainjob.TrainJob, len(s.TrainJobs))
	for i := range s.TrainJobs {
		byUID[s.TrainJobs[i].UID] = &s.TrainJobs[i]
	}
	now := e.now()
	history := historyOf(s.Workloads, byUID)
	out := map[string]forecast.Start{}
	for _, name := range clusterQueues {
		q, err := e.clusterQueue(ctx, name)
		plan := forecast.Plan{Queue: q, Now: now}
		var waiting []queued
		for i := range s.Workloads {
			wl := &s.Workloads[i]
			job := ownerOf(wl, byUID)
			switch {
			case apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
			case wl.Status.Admission != nil && string(wl.Status.Admission.ClusterQueue) == name &&
				apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved):
				r := forecast.Running{Job: jobName(wl, job), Uses: usesOf(wl.Status.Admission)}
				r.End, r.From, r.Why = forecast.EndOf(job, wl, history, now)
				plan.Running = append(plan.Running, r)
			case wl.Status.Admission == nil && ptr.Deref(wl.Spec.Active, true):
				lq := s.LocalQueues[wl.Namespace+"/"+string(wl.Spec.QueueName)]
				if lq == nil || string(lq.Spec.ClusterQueue) != name {
					continue
				}
				if why := inactive(lq.Status.Conditions, kueue.LocalQueueActive, "LocalQueue "+lq.Namespace+"/"+lq.Name); why != "" {
					out[jobName(wl, job)] = forecast.Start{Unknown: why}
					continue
				}
				waiting = append(waiting, queued{wl: wl, job: job, priority: effectivePriority(wl), at: queuedAt(wl)})
			}
		}
		if why := unserved(name, q, err); why != "" {
			for _, w := range waiting {
				out[jobName(w.wl, w.job)] = forecast.Start{Unknown: why}
			}
			continue
		}
		plan.Queue = reservedBy(q, plan.Running)
		plan.StrictFIFO = q.ClusterQueue.Spec.QueueingStrategy == kueue.StrictFIFO
		slices.SortStableFunc(waiting, kueueOrder)
		for _, w := range waiting {
			plan.Waiting = append(plan.Waiting, waitingOf(w, history))
		}
		for k, v := range forecast.Forecast(plan) {
			out[k] = v
		}
	}
	return out
}

// reservedBy is q with what running reserves as its reservations: the
// quota the forecast gives back is the quota it took, whatever the
// ClusterQueue's status, which Kueue writes a moment after it admits,
// says yet.
func reservedBy(q *forecast.Queue, running []forecast.Running) *forecast.Queue {
	used := map[string]corev1.ResourceList{}
	for _, r := range running {
		for f, rl := range r.Uses {
			used[f] = quota.Add(used[f], rl)
		}
	}
	cq := q.ClusterQueue.DeepCopy()
	cq.Status.FlavorsReservation = nil
	for _, f := range slices.Sorted(maps.Keys(used)) {
		fu := kueue.FlavorUsage{Name: kueue.ResourceFlavorReference(f)}
		for _, r := range slices.Sorted(maps.Keys(used[f])) {
			fu.Resources = append(fu.Resources, kueue.ResourceUsage{Name: r, Total: used[f][r]})
		}
		cq.Status.FlavorsReservation = append(cq.Status.FlavorsReservation, fu)
	}
	out := *q
	out.ClusterQueue = cq
	return &out
}

// unserved says why a ClusterQueue admits nothing now: missing,
// unreadable or inactive; "" when it admits.
func unserved(name string, q *forecast.Queue, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf("its ClusterQueue %s can't be read: %v", name, err)
	case q == nil:
		return "its ClusterQueue " + name + " does not exist"
	}
	return inactive(q.ClusterQueue.Status.Conditions, kueue.ClusterQueueActive, "ClusterQueue "+name)
}

// inactive says why a queue whose Active condition is False admits
// nothing; "" when it is active, or Kueue has not said yet.
func inactive(conds []metav1.Condition, active, queue string) string {
	c := apimeta.FindStatusCondition(conds, active)
	if c == nil || c.Status != metav1.ConditionFalse {
		return ""
	}
	return fmt.Sprintf("its %s is inactive (%s: %s): nothing is admitted from it until it is active again", queue, c.Reason, c.Message)
}

// queued is a waiting Workload with its job and its place in Kueue's
// order, read once: a sort of ten thousand jobs compares each many times.
type queued struct {
	wl       *kueue.Workload
	job      *trainjob.TrainJob
	priority int64
	at       time.Time
}

func waitingOf(w queued, history forecast.History) forecast.Waiting {
	out := forecast.Waiting{Job: jobName(w.wl, w.job), Roles: rolesOf(w.wl)}
	out.Runs, out.From = forecast.RunsFor(w.job, w.wl, history)
	if out.From == "" {
		out.Why = "no history of its runtime, no maximum execution time"
	}
	return out
}

// historyOf is how long the finished TrainJobs of each runtime ran.
func historyOf(wls []kueue.Workload, byUID map[types.UID]*trainjob.TrainJob) forecast.History {
	h := forecast.History{}
	for i := range wls {
		job := ownerOf(&wls[i], byUID)
		if job == nil {
			continue
		}
		if d, ok := forecast.RanFor(&wls[i]); ok {
			h.Add(forecast.RuntimeKey(job), d)
		}
	}
	return h
}

// ownerOf is the TrainJob controlling wl; nil for another kind's.
func ownerOf(wl *kueue.Workload, byUID map[types.UID]*trainjob.TrainJob) *trainjob.TrainJob {
	if uid, ok := jobworkload.JobUID(wl); ok {
		return byUID[uid]
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

// effectivePriority is the priority Kueue's queues order by: the
// Workload's, plus a preemption-cost policy's boost.
func effectivePriority(wl *kueue.Workload) int64 {
	return int64(ptr.Deref(wl.Spec.Priority, 0)) + int64(preemptcost.BoostValue(wl))
}

// kueueOrder is the order Kueue's queues pop in: higher effective
// priority first, then the earlier queue time (an evicted Workload queues
// again from its eviction).
func kueueOrder(a, b queued) int {
	return cmp.Or(cmp.Compare(b.priority, a.priority), a.at.Compare(b.at), cmp.Compare(a.wl.Namespace+"/"+a.wl.Name, b.wl.Namespace+"/"+b.wl.Name))
}

func queuedAt(wl *kueue.Workload) time.Time {
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil {
		return c.LastTransitionTime.Time
	}
	return wl.CreationTimestamp.Time
}
