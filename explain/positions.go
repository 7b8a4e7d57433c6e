package explain

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
)

// Position of a pending Workload in its queues (0 is the head).
type Position struct {
	InLocalQueue   int32 `json:"inLocalQueue"`
	InClusterQueue int32 `json:"inClusterQueue"`
}

// Positions asks Kueue's visibility API where a pending Workload is in its
// queues; nil when Kueue does not serve it.
type Positions interface {
	Position(ctx context.Context, namespace, localQueue, workload string) (*Position, error)
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

func (v *VisibilityPositions) Position(ctx context.Context, namespace, localQueue, workload string) (*Position, error) {
	summary, err := v.pending(ctx, "namespaces", namespace, "localqueues", localQueue)
	if err != nil {
		return nil, err
	}
	for _, p := range summary.Items {
		if p.Name == workload {
			return &Position{InLocalQueue: p.PositionInLocalQueue, InClusterQueue: p.PositionInClusterQueue}, nil
		}
	}
	return nil, fmt.Errorf("not among the pending workloads Kueue's visibility API lists")
}

// ClusterQueuePositions lists the pending workloads of ClusterQueue cq in
// one request: "namespace/name" to the position in cq (0 is the head).
func (v *VisibilityPositions) ClusterQueuePositions(ctx context.Context, cq string) (map[string]int32, error) {
	summary, err := v.pending(ctx, "clusterqueues", cq)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int32, len(summary.Items))
	for _, p := range summary.Items {
		out[p.Namespace+"/"+p.Name] = p.PositionInClusterQueue
	}
	return out, nil
}

// pending asks the visibility API for the pending workloads of the queue
// at path (below its group and version).
func (v *VisibilityPositions) pending(ctx context.Context, path ...string) (*visibility.PendingWorkloadsSummary, error) {
	full := append([]string{"/apis", visibility.SchemeGroupVersion.Group, visibility.SchemeGroupVersion.Version}, path...)
	raw, err := v.REST.Get().AbsPath(append(full, "pendingworkloads")...).DoRaw(ctx)
	if err != nil {
		// The API server's Status says who may not read what; the client
		// keeps only its reason.
		var st metav1.Status
		if json.Unmarshal(raw, &st) == nil && st.Kind == "Status" && st.Message != "" {
			err = &apierrors.StatusError{ErrStatus: st}
		}
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Kueue's visibility API is not served on this cluster")
		}
		return nil, fmt.Errorf("Kueue's visibility API: %w", err)
	}
	var summary visibility.PendingWorkloadsSummary
	if err := json.Unmarshal(raw, &summary); err != nil {
		return nil, fmt.Errorf("decoding Kueue's visibility answer: %w", err)
	}
	return &summary, nil
}
