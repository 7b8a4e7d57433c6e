package podsets

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Defaulter fills in the defaults the API server applies to Workload PodSets.
//
// Kueue compares the PodSets a job reports with the stored Workload's, and the
// stored ones went through the Workload CRD's schema defaults (a container
// port's protocol, for one). Kueue's in-tree integration gets those defaults
// with a dry-run Workload create on every call; applying the same schema in
// process gives the same answer with no request.
type Defaulter interface {
	Default(podSets []kueue.PodSet) error
}

// SchemaDefaulter applies the defaults declared in a Workload CRD's schema.
type SchemaDefaulter struct {
	podSet *structuralschema.Structural
}

// NewSchemaDefaulter reads the schema of PodSets from the given version of a
// Workload CustomResourceDefinition, normally the one installed in the cluster
// so defaults follow the deployed Kueue.
func NewSchemaDefaulter(crd *apiextensionsv1.CustomResourceDefinition, version string) (*SchemaDefaulter, error) {
	var v1Schema *apiextensionsv1.JSONSchemaProps
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version && crd.Spec.Versions[i].Schema != nil {
			v1Schema = crd.Spec.Versions[i].Schema.OpenAPIV3Schema
		}
	}
	if v1Schema == nil {
		return nil, fmt.Errorf("CRD %s has no schema for version %q", crd.Name, version)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema of CRD %s: %w", crd.Name, err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("CRD %s has no structural schema: %w", crd.Name, err)
	}
	spec, ok := s.Properties["spec"]
	if !ok {
		return nil, fmt.Errorf("CRD %s: schema has no spec", crd.Name)
	}
	podSets, ok := spec.Properties["podSets"]
	if !ok || podSets.Items == nil {
		return nil, fmt.Errorf("CRD %s: schema has no spec.podSets items", crd.Name)
	}
	return &SchemaDefaulter{podSet: podSets.Items}, nil
}

// MaxPodSets is the maxItems of spec.podSets in the given version of a
// Workload CustomResourceDefinition, 0 if it declares none.
func MaxPodSets(crd *apiextensionsv1.CustomResourceDefinition, version string) int {
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		if podSets, ok := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["podSets"]; ok && podSets.MaxItems != nil {
			return int(*podSets.MaxItems)
		}
	}
	return 0
}

// Default implements Defaulter.
func (d *SchemaDefaulter) Default(podSets []kueue.PodSet) error {
	for i := range podSets {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&podSets[i])
		if err != nil {
			return fmt.Errorf("PodSet %q: %w", podSets[i].Name, err)
		}
		defaulting.Default(u, d.podSet)
		var out kueue.PodSet
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &out); err != nil {
			return fmt.Errorf("PodSet %q: %w", podSets[i].Name, err)
		}
		podSets[i] = out
	}
	return nil
}
