package discovery

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// pinnedWorkloadCRD reads the Workload CRD of the Kueue release a tools module
// of ours pins ("" for the one this module builds against).
func pinnedWorkloadCRD(t *testing.T, toolsDir string) *apiextensionsv1.CustomResourceDefinition {
	dir := ""
	if toolsDir != "" {
		dir = filepath.Join("..", "hack", "tools", toolsDir)
	}
	return fixtures.ModuleCRD(t, dir, "sigs.k8s.io/kueue", fixtures.WorkloadCRDFile)
}

func TestKueueReleaseIsReadFromTheWorkloadCRD(t *testing.T) {
	for _, tc := range []struct {
		tools string
		want  KueueRelease
	}{
		{"kueue-v0.16.2", KueueRelease{PodsReadyByDefault: false, MaxPodSets: 8}},
		{"kueue-v0.19.2", KueueRelease{PodsReadyByDefault: true, MaxPodSets: 18}},
	} {
		t.Run(tc.tools, func(t *testing.T) {
			got, err := KueueReleaseOf(pinnedWorkloadCRD(t, tc.tools))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	noV1beta2 := pinnedWorkloadCRD(t, "")
	for i := range noV1beta2.Spec.Versions {
		noV1beta2.Spec.Versions[i].Name += "-other"
	}
	if _, err := KueueReleaseOf(noV1beta2); err == nil || !strings.Contains(err.Error(), "upgrade Kueue") {
		t.Errorf("a Workload CRD without v1beta2: want a refusal saying to upgrade Kueue, got %v", err)
	}
}

// A Kueue newer than the one linked: its Workloads have fields our types
// lack, which the job framework's full Updates would drop.
func TestANewerKueueIsRefused(t *testing.T) {
	crd := pinnedWorkloadCRD(t, "")
	for i := range crd.Spec.Versions {
		s := crd.Spec.Versions[i].Schema.OpenAPIV3Schema
		status := s.Properties["status"]
		status.Properties["futureState"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		s.Properties["status"] = status
		spec := s.Properties["spec"]
		podSets := spec.Properties["podSets"]
		item := podSets.Items.Schema
		item.Properties["futureKnob"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		// Pod template fields follow Kubernetes' release, not Kueue's.
		tmpl := item.Properties["template"]
		tmplSpec := tmpl.Properties["spec"]
		tmplSpec.Properties["futurePodField"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		tmpl.Properties["spec"] = tmplSpec
		item.Properties["template"] = tmpl
		spec.Properties["podSets"] = podSets
		s.Properties["spec"] = spec
	}
	_, err := KueueReleaseOf(crd)
	if err == nil {
		t.Fatal("a Workload CRD with fields our types lack: want a refusal")
	}
	for _, want := range []string{"spec.podSets[].futureKnob", "status.futureState", "newer than the Kueue v0.19.2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "futurePodField") {
		t.Errorf("refusal %q names a pod template field", err)
	}
}

func TestLinkedKueueIsGoModsKueue(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/kueue").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != linkedKueue {
		t.Errorf("go.mod requires Kueue %s, linkedKueue says %s", got, linkedKueue)
	}
}
