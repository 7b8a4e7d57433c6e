package overview

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/paging"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
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

// Fetch reads what Rows needs with one list per kind, page by page — TrainJobs,
// Workloads, LocalQueues, running pods, and ResourceClaimTemplates when a
// job claims DRA devices through one — and one visibility request per
// ClusterQueue with pending jobs, never one request per job. Positions are
// left out, with the reason in notes, where Kueue's visibility API does not
// answer (not served, or not allowed).
func Fetch(ctx context.Context, c client.Reader, pending Pending, o Options, now time.Time) (in Input, notes []string, err error) {
	in = Input{Now: now, ManageJobsWithoutQueueName: o.ManageJobsWithoutQueueName,
		LocalQueues: map[string]*kueue.LocalQueue{}, RunningPods: map[string]int32{}, Positions: map[string]int32{}}
	ns := []client.ListOption{}
	if o.Namespace != "" {
		ns = append(ns, client.InNamespace(o.Namespace))
	}
	jobOpts := ns
	if o.Selector != nil {
		jobOpts = append(slices.Clone(ns), client.MatchingLabelsSelector{Selector: o.Selector})
	}
	// Trainer's pods carry their JobSet's name: the running ones of every
	// JobSet in one list.
	hasJobSet, err := labels.NewRequirement(jobsetapi.JobSetNameKey, selection.Exists, nil)
	if err != nil {
		return in, nil, err
	}
	podOpts := append(slices.Clone(ns), client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*hasJobSet)},
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("status.phase", string(corev1.PodRunning))})
	// The kinds are read side by side: the API server encodes one while
	// this process decodes another.
	var g paging.SideBySide
	g.Go(func() error {
		var err error
		in.Jobs, err = paging.Items(ctx, c, func() *trainjob.TrainJobList { return &trainjob.TrainJobList{} },
			func(l *trainjob.TrainJobList) []trainjob.TrainJob { return l.Items }, jobOpts...)
		return wrap("listing TrainJobs", err)
	})
	g.Go(func() error {
		var err error
		in.Workloads, err = paging.Items(ctx, c, func() *kueue.WorkloadList { return &kueue.WorkloadList{} },
			func(l *kueue.WorkloadList) []kueue.Workload { return l.Items }, ns...)
		return wrap("listing Workloads", err)
	})
	g.Go(func() error {
		return wrap("listing LocalQueues", paging.List(ctx, c, func() *kueue.LocalQueueList { return &kueue.LocalQueueList{} },
			func(l *kueue.LocalQueueList) {
				for i := range l.Items {
					in.LocalQueues[l.Items[i].Namespace+"/"+l.Items[i].Name] = &l.Items[i]
				}
			}, ns...))
	})
	g.Go(func() error {
		return wrap("listing running pods", paging.List(ctx, c, func() *corev1.PodList { return &corev1.PodList{} }, func(l *corev1.PodList) {
			for _, p := range l.Items {
				in.RunningPods[p.Namespace+"/"+p.Labels[jobsetapi.JobSetNameKey]]++
			}
		}, podOpts...))
	})
	if err := g.Wait(); err != nil {
		return in, nil, err
	}
	if in.ClaimTemplates, err = claimTemplates(ctx, c, in.Workloads, ns); err != nil {
		return in, nil, err
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

// wrap says what failed; nil stays nil.
func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// claimTemplates are the devices of each ResourceClaimTemplate, by
// namespace and name, listed once, and only when some Workload's pods
// claim through one (DRA): a cluster without DRA costs no request. A
// reader who may not list them, or a cluster that serves no DRA, gets
// none: its DRA devices are then not counted.
func claimTemplates(ctx context.Context, c client.Reader, wls []kueue.Workload, ns []client.ListOption) (map[string]map[string]quota.Devices, error) {
	needed := slices.ContainsFunc(wls, func(wl kueue.Workload) bool {
		return slices.ContainsFunc(wl.Spec.PodSets, func(ps kueue.PodSet) bool { return quota.ClaimsTemplates(&ps.Template.Spec) })
	})
	if !needed {
		return nil, nil
	}
	var list resourcev1.ResourceClaimTemplateList
	if err := c.List(ctx, &list, ns...); err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing ResourceClaimTemplates: %w", err)
	}
	out := map[string]map[string]quota.Devices{}
	for _, t := range list.Items {
		if out[t.Namespace] == nil {
			out[t.Namespace] = map[string]quota.Devices{}
		}
		out[t.Namespace][t.Name] = quota.TemplateDevices(t.Spec.Spec)
	}
	return out, nil
}

// pendingClusterQueues are the ClusterQueues the listed jobs wait in,
// sorted.
func pendingClusterQueues(in Input) []string {
	set := map[string]bool{}
	for _, r := range Rows(in) {
		if (r.State.Waiting()) && r.ClusterQueue != "" {
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
