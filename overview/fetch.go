package overview

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Pending reads the pending workloads of a ClusterQueue from Kueue's
// visibility API: "namespace/name" to position.
type Pending interface {
	ClusterQueuePositions(ctx context.Context, clusterQueue string) (map[string]int32, error)
}

// Options say which TrainJobs to list.
type Options struct {
	// Namespace; "" for every namespace.
	Namespace string
	// Selector narrows the TrainJobs by label; nil for all.
	Selector labels.Selector
	// ManageJobsWithoutQueueName: Kueue queues unlabelled jobs too.
	ManageJobsWithoutQueueName bool
}

// Fetch reads what Rows needs with one list call per kind — TrainJobs,
// Workloads, LocalQueues, running pods — and one visibility request per
// ClusterQueue with pending jobs, never one request per job. Positions are
// left out, with the reason in notes, where Kueue's visibility API does not
// answer (not served, or not allowed).
func Fetch(ctx context.Context, c client.Reader, pending Pending, o Options, now time.Time) (in Input, notes []string, err error) {
	in = Input{Now: now, ManageJobsWithoutQueueName: o.ManageJobsWithoutQueueName,
		LocalQueues: map[string]string{}, RunningPods: map[string]int32{}, Positions: map[string]int32{}}
	ns := []client.ListOption{}
	if o.Namespace != "" {
		ns = append(ns, client.InNamespace(o.Namespace))
	}
	var jobs trainjob.TrainJobList
	jobOpts := ns
	if o.Selector != nil {
		jobOpts = append(slices.Clone(ns), client.MatchingLabelsSelector{Selector: o.Selector})
	}
	if err := c.List(ctx, &jobs, jobOpts...); err != nil {
		return in, nil, fmt.Errorf("listing TrainJobs: %w", err)
	}
	in.Jobs = jobs.Items
	var wls kueue.WorkloadList
	if err := c.List(ctx, &wls, ns...); err != nil {
		return in, nil, fmt.Errorf("listing Workloads: %w", err)
	}
	in.Workloads = wls.Items
	var lqs kueue.LocalQueueList
	if err := c.List(ctx, &lqs, ns...); err != nil {
		return in, nil, fmt.Errorf("listing LocalQueues: %w", err)
	}
	for _, lq := range lqs.Items {
		in.LocalQueues[lq.Namespace+"/"+lq.Name] = string(lq.Spec.ClusterQueue)
	}
	// Trainer's pods carry their JobSet's name: the running ones of every
	// JobSet in one list.
	hasJobSet, err := labels.NewRequirement(jobsetapi.JobSetNameKey, selection.Exists, nil)
	if err != nil {
		return in, nil, err
	}
	var pods corev1.PodList
	podOpts := append(slices.Clone(ns), client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*hasJobSet)},
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("status.phase", string(corev1.PodRunning))})
	if err := c.List(ctx, &pods, podOpts...); err != nil {
		return in, nil, fmt.Errorf("listing running pods: %w", err)
	}
	for _, p := range pods.Items {
		in.RunningPods[p.Namespace+"/"+p.Labels[jobsetapi.JobSetNameKey]]++
	}
	if pending == nil {
		return in, nil, nil
	}
	for _, cq := range pendingClusterQueues(in) {
		positions, err := pending.ClusterQueuePositions(ctx, cq)
		if err != nil {
			notes = append(notes, fmt.Sprintf("no positions in ClusterQueue %s: %v", cq, err))
			continue
		}
		for k, v := range positions {
			in.Positions[k] = v
		}
	}
	return in, notes, nil
}

// pendingClusterQueues are the ClusterQueues the listed jobs wait in,
// sorted.
func pendingClusterQueues(in Input) []string {
	set := map[string]bool{}
	for _, r := range Rows(in) {
		if (r.State == StateQueued || r.State == StatePreempted) && r.ClusterQueue != "" {
			set[r.ClusterQueue] = true
		}
	}
	out := make([]string, 0, len(set))
	for cq := range set {
		out = append(out, cq)
	}
	slices.Sort(out)
	return out
}
