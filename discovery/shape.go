package discovery

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

const (
	TrainJobCRD = "trainjobs.trainer.kubeflow.org"
	workloadCRD = "workloads.kueue.x-k8s.io"
	// PodGroupCRD is scheduler-plugins' PodGroup CRD (gang mode
	// coscheduling).
	PodGroupCRD = "podgroups.scheduling.x-k8s.io"
)

// hasPodGroups reports whether scheduler-plugins' PodGroup CRD is installed.
func hasPodGroups(ctx context.Context, c client.Reader) (bool, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: PodGroupCRD}, &crd); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading CRD %s: %w", PodGroupCRD, err)
	}
	return true, nil
}

// trainerShape reads the installed TrainJob CRD's shape. It refuses,
// saying why, what it can't serve.
func trainerShape(ctx context.Context, c client.Reader) (shape.Shape, error) {
	var tj apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: TrainJobCRD}, &tj); err != nil {
		return nil, fmt.Errorf("reading CRD %s (is Kubeflow Trainer installed?): %w", TrainJobCRD, err)
	}
	return DetectShape(&tj)
}

// workloadDefaulter applies the installed Workload CRD's defaults.
func workloadDefaulter(wl *apiextensionsv1.CustomResourceDefinition) (podsets.Defaulter, error) {
	return podsets.NewSchemaDefaulter(wl, kueue.SchemeGroupVersion.Version)
}

// DetectShape is the Shape of the Trainer release whose TrainJob CRD crd
// is (shape.Releases, one row per release); it refuses, saying why, a CRD
// of no release this build serves.
func DetectShape(crd *apiextensionsv1.CustomResourceDefinition) (shape.Shape, error) {
	r, err := shape.ReleaseOf(crd)
	if err != nil {
		return nil, err
	}
	return r.Shape, nil
}
