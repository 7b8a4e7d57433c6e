package integration

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

func crdWithSpecFields(fields ...string) *apiextensionsv1.CustomResourceDefinition {
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	for _, f := range fields {
		spec.Properties[f] = apiextensionsv1.JSONSchemaProps{Type: "array"}
	}
	return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1alpha1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
			}},
		}},
	}}
}

func TestDetectShape(t *testing.T) {
	s, err := DetectShape(crdWithSpecFields("runtimeRef", "podTemplateOverrides"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(shape.PodTemplateOverrides); !ok {
		t.Errorf("shape %T, want PodTemplateOverrides", s)
	}
	_, err = DetectShape(crdWithSpecFields("runtimeRef", "somethingNew"))
	if err == nil || !strings.Contains(err.Error(), "somethingNew") || !strings.Contains(err.Error(), "v2.1") {
		t.Errorf("unknown shape: error %v should name what was found and what is supported", err)
	}
}
