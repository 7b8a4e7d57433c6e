package shape

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// Release is one line of Kubeflow Trainer releases as trainjob-kueue
// serves it: how the installed TrainJob CRD tells it apart, and the Shape
// its jobs are written and counted in (override field, counting rules,
// start). Adding a Trainer release is adding a row to Releases (and, to
// run it locally, its hack/tools/trainer-<version> module and its JobSet
// pin in hack/component.sh).
type Release struct {
	// Name of the release line, as users know it.
	Name string
	// Detect reports whether spec, the storage version's spec schema of
	// the installed TrainJob CRD, is this release's.
	Detect func(spec apiextensionsv1.JSONSchemaProps) bool
	// Shape of its jobs.
	Shape Shape
}

// Releases, newest first: the installed release is the first whose Detect
// holds, so a later release that keeps an earlier one's field must come
// before it.
func Releases() []Release {
	return []Release{
		{
			// Merges resourcesPerNode, applies it only with an mlPolicy, and
			// runs a job from its runtime snapshot. Its CRD is told from
			// v2.2's by a field its runtime patches' pod spec gained.
			Name: "v2.3", Detect: func(spec apiextensionsv1.JSONSchemaProps) bool {
				return hasPath(spec, "runtimePatches", "items", "trainingRuntimeSpec", "template", "spec", "replicatedJobs", "items",
					"template", "spec", "template", "spec", "terminationGracePeriodSeconds")
			},
			Shape: RuntimePatches{
				Release: podsets.Rules{
					LauncherAsNodeWorkersGetResources: true,
					ResourcesPerNodeMerges:            true,
					ResourcesPerNodeNeedsMLPolicy:     true,
					RuntimeSnapshot:                   true,
				},
				UnsuspendsInOnePatch: true,
			},
		},
		{
			// v2.2.0 and v2.2.1 share a CRD; the first start asks which
			// takes the one-request start.
			Name: "v2.2", Detect: has("runtimePatches"),
			Shape: RuntimePatches{Release: podsets.Rules{LauncherAsNodeWorkersGetResources: true}, UnsuspendsInOnePatch: true},
		},
		{Name: "v2.1", Detect: has("podTemplateOverrides"), Shape: PodTemplateOverrides{}},
		{Name: "v2.0", Detect: has("podSpecOverrides"), Shape: PodSpecOverrides{}},
	}
}

// ReleaseOf is the release whose TrainJob CRD crd is: the first of
// Releases whose Detect holds for the storage version's spec. It refuses,
// naming the fields it found and the releases supported, a CRD no row
// detects.
func ReleaseOf(crd *apiextensionsv1.CustomResourceDefinition) (Release, error) {
	var found []string
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Storage || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		for _, r := range Releases() {
			if r.Detect(spec) {
				return r, nil
			}
		}
		for name := range spec.Properties {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	var supported []string
	for _, r := range slices.Backward(Releases()) {
		supported = append(supported, fmt.Sprintf("%s (Kubeflow Trainer %s)", r.Shape.Name(), r.Name))
	}
	return Release{}, fmt.Errorf("the installed TrainJob CRD has no override field this build supports (spec fields found: %v); supported: %s", found, strings.Join(supported, ", "))
}

// has detects a spec field.
func has(field string) func(apiextensionsv1.JSONSchemaProps) bool {
	return func(spec apiextensionsv1.JSONSchemaProps) bool { _, ok := spec.Properties[field]; return ok }
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
