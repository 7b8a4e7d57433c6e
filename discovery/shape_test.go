package discovery

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
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

// releaseCRD reads the TrainJob CRD a Trainer release ships.
func TestDetectShapeOfEveryRelease(t *testing.T) {
	cases := map[string]struct {
		want    string
		rules   podsets.Rules
		wantErr string
	}{
		"v2.0.1": {want: "spec.podSpecOverrides", rules: podsets.Rules{NoJobsStatus: true}},
		"v2.1.0": {want: "spec.podTemplateOverrides", rules: podsets.Rules{LauncherAsNodeWorkersGetResources: true}},
		"v2.2.1": {want: "spec.runtimePatches", rules: podsets.Rules{LauncherAsNodeWorkersGetResources: true}},
		"v2.3.0": {want: "spec.runtimePatches", rules: podsets.Rules{LauncherAsNodeWorkersGetResources: true, ResourcesPerNodeMerges: true, ResourcesPerNodeNeedsMLPolicy: true, RuntimeSnapshot: true}},
	}
	for version, tc := range cases {
		t.Run(version, func(t *testing.T) {
			s, err := DetectShape(fixtures.TrainerCRD(t, version))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name() != tc.want || s.Rules() != tc.rules {
				t.Errorf("got %s %+v, want %s %+v", s.Name(), s.Rules(), tc.want, tc.rules)
			}
		})
	}
}
