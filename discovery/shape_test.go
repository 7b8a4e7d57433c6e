package discovery

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

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
func releaseCRD(t *testing.T, version string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/kubeflow/trainer/v2@"+version).Output()
	if err != nil {
		t.Fatalf("downloading Trainer %s: %v", version, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(mod.Dir, "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

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
			s, err := DetectShape(releaseCRD(t, version))
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

func TestShapeChangedOnInPlaceUpgrade(t *testing.T) {
	v21, err := DetectShape(releaseCRD(t, "v2.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ShapeChanged(releaseCRD(t, "v2.1.0"), v21); err != nil {
		t.Errorf("same CRD: %v", err)
	}
	if err := ShapeChanged(releaseCRD(t, "v2.3.0"), v21); err == nil || !strings.Contains(err.Error(), "spec.runtimePatches") {
		t.Errorf("v2.1 -> v2.3 must be noticed: %v", err)
	}
	v22, _ := DetectShape(releaseCRD(t, "v2.2.1"))
	if err := ShapeChanged(releaseCRD(t, "v2.3.0"), v22); err == nil {
		t.Errorf("v2.2 -> v2.3 changes the resourcesPerNode rules and must be noticed")
	}
}
