package integration

import (
	"context"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Positions asks Kueue's visibility API where a pending Workload is in its
// queues; nil when Kueue does not serve it.
type Positions interface {
	Position(ctx context.Context, namespace, localQueue, workload string) (*quota.Position, error)
}

// Explainer fetches what quota.Explain needs, with the caller's identity:
// reads only.
type Explainer struct {
	Client    client.Reader
	Positions Positions
}

// Explain explains a TrainJob: one read from the cluster (namespace/name),
// or a manifest not created yet (job.UID empty), which is explained as if
// it were queued now.
func (e *Explainer) Explain(ctx context.Context, job *trainjob.TrainJob) (quota.Explanation, error) {
	s, err := e.shape(ctx, job)
	if err != nil {
		return quota.Explanation{}, err
	}
	rt, err := runtimeSpec(ctx, e.Client, job)
	if err != nil {
		return quota.Explanation{}, err
	}
	roles, err := podsets.Roles(job, rt, s)
	if err != nil {
		return quota.Explanation{}, fmt.Errorf("computing the pods of TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	in := quota.Input{Job: job.Namespace + "/" + job.Name, Roles: roles, LocalQueue: string(jobframework.QueueNameForObject(job))}
	if in.LocalQueue != "" {
		if in.Queue, err = e.queue(ctx, job.Namespace, in.LocalQueue); err != nil {
			return quota.Explanation{}, err
		}
	}
	if job.UID != "" {
		if in.Workload, err = e.workload(ctx, job); err != nil {
			return quota.Explanation{}, err
		}
	}
	if in.Workload != nil && in.Workload.Status.Admission == nil && e.Positions != nil {
		in.Position, err = e.Positions.Position(ctx, job.Namespace, in.LocalQueue, in.Workload.Name)
		if err != nil {
			in.PositionNote = err.Error()
		}
	}
	return quota.Explain(in), nil
}

// Get reads a TrainJob.
func (e *Explainer) Get(ctx context.Context, namespace, name string) (*trainjob.TrainJob, error) {
	job := &trainjob.TrainJob{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, job); err != nil {
		return nil, fmt.Errorf("reading TrainJob %s/%s: %w", namespace, name, err)
	}
	return job, nil
}

// shape of the installed Trainer, from its CRD. A user who may not read
// CRDs gets the shape the job's own fields show.
func (e *Explainer) shape(ctx context.Context, job *trainjob.TrainJob) (shape.Shape, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	err := e.Client.Get(ctx, client.ObjectKey{Name: trainJobCRD}, &crd)
	if err == nil {
		return DetectShape(&crd)
	}
	if !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("reading CRD %s (is Kubeflow Trainer installed?): %w", trainJobCRD, err)
	}
	switch {
	case len(job.Spec.PodSpecOverrides) > 0:
		return shape.PodSpecOverrides{}, nil
	case len(job.Spec.PodTemplateOverrides) > 0:
		return shape.PodTemplateOverrides{}, nil
	}
	return shape.RuntimePatches{Release: podsets.Rules{LauncherAsNodeWorkersGetResources: true}}, nil
}

func (e *Explainer) queue(ctx context.Context, namespace, name string) (*quota.Queue, error) {
	lq := &kueue.LocalQueue{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, lq); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading LocalQueue %s/%s: %w", namespace, name, err)
	}
	cq := &kueue.ClusterQueue{}
	if err := e.Client.Get(ctx, client.ObjectKey{Name: string(lq.Spec.ClusterQueue)}, cq); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ClusterQueue %s: %w", lq.Spec.ClusterQueue, err)
	}
	q := &quota.Queue{ClusterQueue: cq, Flavors: map[string]*kueue.ResourceFlavor{}}
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
		q.CohortLends, q.CohortCapacity = quota.CohortLends(members)
	}
	return q, nil
}

func (e *Explainer) workload(ctx context.Context, job *trainjob.TrainJob) (*kueue.Workload, error) {
	name := jobframework.PrebuiltWorkloadNameFor(job)
	prebuilt := name != ""
	if !prebuilt {
		name = jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, GVK)
	}
	wl := &kueue.Workload{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: name}, wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Workload %s/%s: %w", job.Namespace, name, err)
	}
	return wl, nil
}

// VisibilityPositions reads positions from Kueue's visibility API.
type VisibilityPositions struct{ REST rest.Interface }

// NewVisibilityPositions talks to the API server of cfg.
func NewVisibilityPositions(cfg *rest.Config) (*VisibilityPositions, error) {
	c := rest.CopyConfig(cfg)
	c.APIPath = "/apis"
	c.GroupVersion = &visibility.SchemeGroupVersion
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &VisibilityPositions{REST: rc}, nil
}

func (v *VisibilityPositions) Position(ctx context.Context, namespace, localQueue, workload string) (*quota.Position, error) {
	raw, err := v.REST.Get().AbsPath("/apis", visibility.SchemeGroupVersion.Group, visibility.SchemeGroupVersion.Version,
		"namespaces", namespace, "localqueues", localQueue, "pendingworkloads").DoRaw(ctx)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Kueue's visibility API is not served on this cluster")
		}
		return nil, fmt.Errorf("Kueue's visibility API: %w", err)
	}
	var summary visibility.PendingWorkloadsSummary
	if err := json.Unmarshal(raw, &summary); err != nil {
		return nil, fmt.Errorf("decoding Kueue's visibility answer: %w", err)
	}
	for _, p := range summary.Items {
		if p.Name == workload {
			return &quota.Position{InLocalQueue: p.PositionInLocalQueue, InClusterQueue: p.PositionInClusterQueue}, nil
		}
	}
	return nil, fmt.Errorf("not among the pending workloads Kueue's visibility API lists")
}
