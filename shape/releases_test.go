package shape

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// schema is a JSON schema with the given properties at path (each "items"
// an array step), to stand in for a TrainJob CRD's spec.
func schema(path ...string) apiextensionsv1.JSONSchemaProps {
	if len(path) == 0 {
		return apiextensionsv1.JSONSchemaProps{}
	}
	inner := schema(path[1:]...)
	if path[0] == "items" {
		return apiextensionsv1.JSONSchemaProps{Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &inner}}
	}
	return apiextensionsv1.JSONSchemaProps{Properties: map[string]apiextensionsv1.JSONSchemaProps{path[0]: inner}}
}

func crdOf(spec apiextensionsv1.JSONSchemaProps, storage bool) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
		Name: "v1alpha1", Storage: storage,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec}}},
	}}}}
}

// Each release line is told by its own row, the newest that matches
// first (v2.3's CRD has v2.2's field too), from the storage version only;
// a CRD of no row is refused naming every supported field and release.
func TestReleaseOfPicksTheNewestRowThatMatches(t *testing.T) {
	v23 := schema("runtimePatches", "items", "trainingRuntimeSpec", "template", "spec", "replicatedJobs", "items",
		"template", "spec", "template", "spec", "terminationGracePeriodSeconds")
	cases := map[string]struct {
		spec apiextensionsv1.JSONSchemaProps
		want string
	}{
		"v2.0": {spec: schema("podSpecOverrides"), want: "v2.0"},
		"v2.1": {spec: schema("podTemplateOverrides"), want: "v2.1"},
		"v2.2": {spec: schema("runtimePatches", "items", "trainingRuntimeSpec"), want: "v2.2"},
		"v2.3": {spec: v23, want: "v2.3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := ReleaseOf(crdOf(tc.spec, true))
			if err != nil {
				t.Fatal(err)
			}
			if r.Name != tc.want {
				t.Errorf("release %s, want %s", r.Name, tc.want)
			}
		})
	}
	if r, err := ReleaseOf(crdOf(schema("podSpecOverrides"), false)); err == nil {
		t.Errorf("a served but not stored version was read as %s", r.Name)
	}
	_, err := ReleaseOf(crdOf(schema("somethingNew"), true))
	if err == nil {
		t.Fatal("a CRD of no release was accepted")
	}
	for _, r := range Releases() {
		if !strings.Contains(err.Error(), r.Shape.Name()+" (Kubeflow Trainer "+r.Name+")") {
			t.Errorf("the refusal %q does not name release %s", err, r.Name)
		}
	}
	if !strings.Contains(err.Error(), "somethingNew") {
		t.Errorf("the refusal %q does not name the fields found", err)
	}
}

// No two rows share a name, and the rows of one override field differ in
// their rules or start: a row that changes nothing is a row too many.
func TestEveryReleaseRowIsItsOwn(t *testing.T) {
	seen := map[string]bool{}
	capsOf := map[Capabilities]string{}
	for _, r := range Releases() {
		if seen[r.Name] {
			t.Errorf("release %s has two rows", r.Name)
		}
		seen[r.Name] = true
		caps := r.Shape.Capabilities()
		if other, ok := capsOf[caps]; ok {
			t.Errorf("releases %s and %s are served alike: one row would do", other, r.Name)
		}
		capsOf[caps] = r.Name
	}
}
