package install

import (
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	deploymentName    = "trainjob-kueue-controller-manager"
	defaultCertSecret = "trainjob-kueue-webhook-server-cert"
)

// manager is the rendered manager Deployment and its container.
type manager struct {
	deploy    *unstructured.Unstructured
	container map[string]any
}

func managerOf(t *testing.T, objs []*unstructured.Unstructured) manager {
	t.Helper()
	deploy := find(t, objs, "Deployment", deploymentName)
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if c := c.(map[string]any); c["name"] == "manager" {
			return manager{deploy: deploy, container: c}
		}
	}
	t.Fatalf("Deployment %s has no manager container", deploymentName)
	return manager{}
}

func (m manager) args() []string {
	args, _, _ := unstructured.NestedStringSlice(m.container, "args")
	return args
}

// arg is the value of --name=value, and whether the flag is given.
func (m manager) arg(name string) (string, bool) {
	for _, a := range m.args() {
		if a == "--"+name {
			return "true", true
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func (m manager) port(name string) (int64, bool) {
	ports, _, _ := unstructured.NestedSlice(m.container, "ports")
	for _, p := range ports {
		if p := p.(map[string]any); p["name"] == name {
			return number(p["containerPort"]), true
		}
	}
	return 0, false
}

func (m manager) replicas() int64 {
	r, _, _ := unstructured.NestedFieldNoCopy(m.deploy.Object, "spec", "replicas")
	return number(r)
}

// number is a decoded YAML number (JSON's float64, or an int64).
func number(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return -1
}

func (m manager) volume(name string) map[string]any {
	volumes, _, _ := unstructured.NestedSlice(m.deploy.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		if v := v.(map[string]any); v["name"] == name {
			return v
		}
	}
	return nil
}

func (m manager) certSecret() string {
	s, _, _ := unstructured.NestedString(m.volume("certs"), "secret", "secretName")
	return s
}

func wantArg(t *testing.T, m manager, name, want string) {
	t.Helper()
	if got, ok := m.arg(name); !ok || got != want {
		t.Errorf("--%s=%q (given: %v), want %q", name, got, ok, want)
	}
}

func wantNoArg(t *testing.T, m manager, name string) {
	t.Helper()
	if got, ok := m.arg(name); ok {
		t.Errorf("--%s=%q given, want none", name, got)
	}
}

func has(objs []*unstructured.Unstructured, kind, ns, name string) bool {
	return slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name
	})
}

func appVersion(t *testing.T) string {
	t.Helper()
	ch, err := loader.Load("../../charts/trainjob-kueue")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.AppVersion == "" {
		t.Fatal("Chart.yaml has no appVersion")
	}
	return ch.Metadata.AppVersion
}

// secretRoleNames are the resourceNames of the namespaced Role's rule
// updating Secrets: the certificate Secret the manager writes.
func secretRoleNames(t *testing.T, objs []*unstructured.Unstructured, ns string) []string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Role" || o.GetNamespace() != ns {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		for _, r := range rules {
			r := r.(map[string]any)
			res, _, _ := unstructured.NestedStringSlice(r, "resources")
			verbs, _, _ := unstructured.NestedStringSlice(r, "verbs")
			if slices.Contains(res, "secrets") && slices.Contains(verbs, "update") {
				names, _, _ := unstructured.NestedStringSlice(r, "resourceNames")
				return names
			}
		}
	}
	t.Fatalf("no Role in %s lets the manager update Secrets", ns)
	return nil
}
