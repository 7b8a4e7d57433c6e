package discovery

import (
	"context"
	"fmt"
	"slices"

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
	podGroupCRD = "podgroups.scheduling.x-k8s.io"
)

// hasPodGroups reports whether scheduler-plugins' PodGroup CRD is installed.
func hasPodGroups(ctx context.Context, c client.Reader) (bool, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: podGroupCRD}, &crd); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading CRD %s: %w", podGroupCRD, err)
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

// DetectShape picks the override field from the TrainJob CRD's storage
// version schema, and tells Trainer releases apart where the field alone
// does not:
//   - spec.podSpecOverrides: Trainer v2.0.x;
//   - spec.podTemplateOverrides: Trainer v2.1.x;
//   - spec.runtimePatches: v2.2 and later; when the patches' pod spec has
//     terminationGracePeriodSeconds it is v2.3 or later, which merges
//     resourcesPerNode and applies it only with an mlPolicy.
func DetectShape(crd *apiextensionsv1.CustomResourceDefinition) (shape.Shape, error) {
	var found []string
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Storage || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		for name := range spec.Properties {
			found = append(found, name)
		}
		if _, ok := spec.Properties["podTemplateOverrides"]; ok {
			return shape.PodTemplateOverrides{}, nil
		}
		if _, ok := spec.Properties["podSpecOverrides"]; ok {
			return shape.PodSpecOverrides{}, nil
		}
		if patches, ok := spec.Properties["runtimePatches"]; ok {
			v23 := hasPath(patches, "items", "trainingRuntimeSpec", "template", "spec", "replicatedJobs", "items",
				"template", "spec", "template", "spec", "terminationGracePeriodSeconds")
			return shape.RuntimePatches{
				Release: podsets.Rules{
					LauncherAsNodeWorkersGetResources: true,
					ResourcesPerNodeMerges:            v23,
					ResourcesPerNodeNeedsMLPolicy:     v23,
					RuntimeSnapshot:                   v23,
				},
				// v2.2.0 and v2.2.1 share a CRD; the first start asks.
				UnsuspendsInOnePatch: true,
			}, nil
		}
	}
	slices.Sort(found)
	return nil, fmt.Errorf("the installed TrainJob CRD has no override field this build supports (spec fields found: %v); supported: spec.podSpecOverrides (Kubeflow Trainer v2.0.x), spec.podTemplateOverrides (v2.1.x), spec.runtimePatches (v2.2 and later)", found)
}

// hasPath walks a schema through properties ("items" steps into arrays).
func hasPath(s apiextensionsv1.JSONSchemaProps, path ...string) bool {
	for _, p := range path {
		if p == "items" {
			if s.Items == nil || s.Items.Schema == nil {
				return false
			}
			s = *s.Items.Schema
			continue
		}
		next, ok := s.Properties[p]
		if !ok {
			return false
		}
		s = next
	}
	return true
}
