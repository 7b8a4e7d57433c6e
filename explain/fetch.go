package explain

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Explainer fetches what Explain needs, with the caller's identity: reads
// only.
type Explainer struct {
	Client    client.Reader
	Positions Positions
	// Now is the clock the work a preemption would lose is measured by;
	// nil for time.Now.
	Now func() time.Time
}

// lostWork is what a preemption of the job would lose now, under a policy
// with a checkpoint part: as the priority boost counts it.
func (e *Explainer) lostWork(job *trainjob.TrainJob, roles []podsets.Role, wl *kueue.Workload, policy string) *lostWork {
	p, err := preemptcost.Parse(policy)
	if err != nil || p.Checkpoint == nil {
		return nil
	}
	now := e.now()
	s := preemptcost.SignalsOf(job, roles, wl, now, p.Checkpoint.MetricName())
	b := preemptcost.Of(p, s)
	if !s.Training || s.RunSeconds == nil {
		return nil
	}
	return &lostWork{Seconds: b.LostSeconds, NextStepSeconds: preemptcost.NextChange(p, s)}
}

// Explain explains a TrainJob: one read from the cluster (namespace/name),
// or a manifest not created yet (job.UID empty), which is explained as if
// it were queued now.
func (e *Explainer) Explain(ctx context.Context, job *trainjob.TrainJob) (Explanation, error) {
	s, err := e.shape(ctx, job)
	if err != nil {
		return Explanation{}, err
	}
	// What the admission books: on Trainer v2.3 the job's snapshot of its
	// runtime, once taken.
	rt, snapshotted, err := runtimesource.Read(ctx, e.Client, job, s.Rules())
	if err != nil {
		return Explanation{}, err
	}
	roles, err := podsets.Roles(job, rt, s)
	if err != nil {
		return Explanation{}, fmt.Errorf("computing the pods of TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	in := Input{Job: job.Namespace + "/" + job.Name, TrainJob: job, Roles: roles, LocalQueue: string(jobframework.QueueNameForObject(job))}
	if snapshotted {
		in.RuntimeFrom = fmt.Sprintf("Trainer's snapshot of the runtime, ConfigMap %s/%s-runtime-snapshot (the runtime as it was when the job was created)", job.Namespace, job.Name)
	}
	if in.DRA, err = e.dra(ctx, job.Namespace, roles); err != nil {
		return Explanation{}, err
	}
	if in.LocalQueue != "" {
		if in.Queue, err = e.queue(ctx, job.Namespace, in.LocalQueue); err != nil {
			return Explanation{}, err
		}
	}
	if job.UID != "" {
		if in.Workload, err = e.workload(ctx, job); err != nil {
			return Explanation{}, err
		}
	}
	if in.Queue != nil && in.Workload != nil {
		if in.Priority, err = e.priority(ctx, in.Queue.ClusterQueue, in.Workload); err != nil {
			return Explanation{}, err
		}
		if in.Priority != nil {
			in.Priority.Lost = e.lostWork(job, roles, in.Workload, in.Priority.Policy)
		}
	}
	switch {
	case in.Queue != nil && in.Workload != nil && in.Workload.Status.Admission == nil:
		in.Expected, in.ExpectedNote = e.expected(ctx, in.Queue, job, nil)
	case in.Queue != nil && job.UID == "":
		in.Expected, in.ExpectedNote = e.expected(ctx, in.Queue, job, roles)
	}
	if in.Workload != nil && in.Workload.Status.Admission == nil && e.Positions != nil {
		in.Position, err = e.Positions.Position(ctx, job.Namespace, in.LocalQueue, in.Workload.Name)
		if err != nil {
			in.PositionNote = err.Error()
		}
	}
	return Explain(in), nil
}

// Get reads a TrainJob.
func (e *Explainer) Get(ctx context.Context, namespace, name string) (*trainjob.TrainJob, error) {
	job := &trainjob.TrainJob{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, job); err != nil {
		return nil, fmt.Errorf("reading TrainJob %s/%s: %w", namespace, name, err)
	}
	return job, nil
}

// shape of the installed Trainer, from its CRD, by the manager's table of
// releases (shape.Releases). A user who may not read CRDs gets the newest
// release of that table whose override field the job's own fields show:
// the same table, never rules of its own.
func (e *Explainer) shape(ctx context.Context, job *trainjob.TrainJob) (shape.Shape, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	err := e.Client.Get(ctx, client.ObjectKey{Name: discovery.TrainJobCRD}, &crd)
	if err == nil {
		return discovery.DetectShape(&crd)
	}
	if !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("reading CRD %s (is Kubeflow Trainer installed?): %w", discovery.TrainJobCRD, err)
	}
	field := shape.RuntimePatches{}.Name()
	switch {
	case len(job.Spec.PodSpecOverrides) > 0:
		field = shape.PodSpecOverrides{}.Name()
	case len(job.Spec.PodTemplateOverrides) > 0:
		field = shape.PodTemplateOverrides{}.Name()
	}
	for _, r := range shape.Releases() {
		if r.Shape.Name() == field {
			return r.Shape, nil
		}
	}
	return nil, fmt.Errorf("no Trainer release of this build writes %s", field)
}

// queue reads the LocalQueue, its ClusterQueue, the flavors it names and,
// in a cohort, what the other members lend; nil when the LocalQueue or the
// ClusterQueue does not exist.
func (e *Explainer) queue(ctx context.Context, namespace, name string) (*forecast.Queue, error) {
	lq := &kueue.LocalQueue{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, lq); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading LocalQueue %s/%s: %w", namespace, name, err)
	}
	return e.clusterQueue(ctx, string(lq.Spec.ClusterQueue))
}

// clusterQueue reads ClusterQueue name, its flavors and what its cohort
// lends; nil when it does not exist.
func (e *Explainer) clusterQueue(ctx context.Context, name string) (*forecast.Queue, error) {
	cq := &kueue.ClusterQueue{}
	if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, cq); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ClusterQueue %s: %w", name, err)
	}
	q := &forecast.Queue{ClusterQueue: cq, Flavors: map[string]*kueue.ResourceFlavor{}}
	for _, rg := range cq.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			rf := &kueue.ResourceFlavor{}
			if err := e.Client.Get(ctx, client.ObjectKey{Name: string(fq.Name)}, rf); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("reading ResourceFlavor %s: %w", fq.Name, err)
			}
			q.Flavors[rf.Name] = rf
		}
	}
	if cq.Spec.CohortName != "" {
		var all kueue.ClusterQueueList
		if err := e.Client.List(ctx, &all); err != nil {
			return nil, fmt.Errorf("listing the ClusterQueues of cohort %s: %w", cq.Spec.CohortName, err)
		}
		var members []*kueue.ClusterQueue
		for i := range all.Items {
			if all.Items[i].Spec.CohortName == cq.Spec.CohortName && all.Items[i].Name != cq.Name {
				members = append(members, &all.Items[i])
			}
		}
		q.CohortLends, q.CohortCapacity = forecast.CohortLends(members)
	}
	return q, nil
}

// workload reads the job's Workload, prebuilt or named by Kueue
// (jobworkload.Of); nil when there is none yet.
func (e *Explainer) workload(ctx context.Context, job *trainjob.TrainJob) (*kueue.Workload, error) {
	return jobworkload.Of(ctx, e.Client, job)
}

// priority reads what explains the job's priority under its ClusterQueue's
// preemption-cost policy: the policy, why it does nothing if the manager
// said so on the ClusterQueue, and the ClusterQueue's admitted Workloads.
// nil when there is no policy and no boost. A user who may not list
// Workloads or Events everywhere gets what is left.
func (e *Explainer) priority(ctx context.Context, cq *kueue.ClusterQueue, wl *kueue.Workload) (*priorityInput, error) {
	policy, _ := preemptcost.Annotated(cq)
	if _, boosted := preemptcost.BoostOn(wl); policy == "" && !boosted {
		return nil, nil
	}
	in := &priorityInput{Policy: policy}
	if policy != "" {
		// An invalid policy is told from the policy itself; Kueue's gate
		// only from what the manager said (it reads Kueue's Configuration).
		if reason, msg := preemptcost.Inactive(cq, true); reason != "" {
			in.Inactive = msg
		} else {
			var events corev1.EventList
			err := e.Client.List(ctx, &events, client.MatchingFields{"involvedObject.kind": "ClusterQueue", "involvedObject.name": cq.Name})
			switch {
			case err == nil:
				for _, ev := range events.Items {
					if ev.Reason == preemptcost.ReasonGateOff {
						in.Inactive = ev.Message
					}
				}
			case !apierrors.IsForbidden(err):
				return nil, fmt.Errorf("reading the events of ClusterQueue %s: %w", cq.Name, err)
			}
		}
	}
	var wls kueue.WorkloadList
	err := e.Client.List(ctx, &wls)
	switch {
	case apierrors.IsForbidden(err):
		return in, nil
	case err != nil:
		return nil, fmt.Errorf("listing the Workloads of ClusterQueue %s: %w", cq.Name, err)
	}
	for _, o := range wls.Items {
		if o.Status.Admission != nil && string(o.Status.Admission.ClusterQueue) == cq.Name && !apimeta.IsStatusConditionTrue(o.Status.Conditions, kueue.WorkloadFinished) {
			in.Admitted = append(in.Admitted, o)
		}
	}
	return in, nil
}

func (e *Explainer) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}
