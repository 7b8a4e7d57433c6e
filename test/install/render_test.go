// Package install checks the two ways to install trainjob-kueue render the
// same objects: `kubectl apply -k config/default` (kustomize) and the Helm
// chart charts/trainjob-kueue, both rendered here with the libraries kubectl
// and helm use. A module of its own: Helm's and kustomize's dependencies
// stay out of the product's.
package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const namespace = "trainjob-kueue-system"

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	out, err := decodeErr(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeErr(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("decoding rendered objects: %w\n%s", err, data)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int { return strings.Compare(key(a), key(b)) })
	return out, nil
}

func key(o *unstructured.Unstructured) string {
	return fmt.Sprintf("%s/%s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
}

func kustomize(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "../../config/default")
	if err != nil {
		t.Fatalf("kustomize build config/default: %v", err)
	}
	data, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, data)
}

func helm(t *testing.T, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderHelm(namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// renderHelm renders the chart as `helm install -n ns` would, with values
// on top of values.yaml.
func renderHelm(ns string, values map[string]any) ([]*unstructured.Unstructured, error) {
	data, err := renderHelmYAML(ns, values)
	if err != nil {
		return nil, err
	}
	return decodeErr(data)
}

func renderHelmYAML(ns string, values map[string]any) ([]byte, error) {
	ch, err := loader.Load("../../charts/trainjob-kueue")
	if err != nil {
		return nil, fmt.Errorf("loading the chart: %w", err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "trainjob-kueue", Namespace: ns, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering the chart: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var all bytes.Buffer
	for _, name := range names {
		if strings.HasSuffix(name, ".yaml") {
			all.WriteString("\n---\n" + files[name])
		}
	}
	return all.Bytes(), nil
}

func TestHelmAndKustomizeRenderTheSameObjects(t *testing.T) {
	fromKustomize := kustomize(t)
	// Helm makes the release namespace itself (--create-namespace).
	fromKustomize = slices.DeleteFunc(fromKustomize, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Namespace" })
	fromHelm := helm(t, nil)
	keys := func(objs []*unstructured.Unstructured) []string {
		out := make([]string, len(objs))
		for i, o := range objs {
			out[i] = key(o)
		}
		return out
	}
	if diff := cmp.Diff(keys(fromKustomize), keys(fromHelm)); diff != "" {
		t.Fatalf("objects (-kustomize +helm):\n%s", diff)
	}
	for i := range fromKustomize {
		if diff := cmp.Diff(fromKustomize[i].Object, fromHelm[i].Object); diff != "" {
			t.Errorf("%s (-kustomize +helm):\n%s", key(fromKustomize[i]), diff)
		}
	}
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// The webhooks never intercept the manager's own namespace or kube-system:
// a broken manager must not block the cluster's own workloads.
func TestWebhooksSkipTheManagersNamespaceAndKubeSystem(t *testing.T) {
	objs := kustomize(t)
	deploy := find(t, objs, "Deployment", "trainjob-kueue-controller-manager")
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		for _, o := range objs {
			if o.GetKind() != kind {
				continue
			}
			hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			if len(hooks) == 0 {
				t.Fatalf("%s %s has no webhooks", kind, o.GetName())
			}
			for _, h := range hooks {
				excluded := excludedNamespaces(h.(map[string]any))
				for _, ns := range []string{"kube-system", deploy.GetNamespace()} {
					if !excluded[ns] {
						t.Errorf("%s %s: webhook %v intercepts namespace %s", kind, o.GetName(), h.(map[string]any)["name"], ns)
					}
				}
			}
		}
	}
}

// excludedNamespaces are the namespaces a webhook's namespaceSelector
// leaves out by name.
func excludedNamespaces(hook map[string]any) map[string]bool {
	exprs, _, _ := unstructured.NestedSlice(hook, "namespaceSelector", "matchExpressions")
	excluded := map[string]bool{}
	for _, e := range exprs {
		m := e.(map[string]any)
		if m["key"] != "kubernetes.io/metadata.name" || m["operator"] != "NotIn" {
			continue
		}
		vals, _, _ := unstructured.NestedStringSlice(m, "values")
		for _, v := range vals {
			excluded[v] = true
		}
	}
	return excluded
}

// The manager's roles, generated from the +kubebuilder:rbac markers: least
// privilege as installed. No wildcard; Secrets and leases only in the
// manager's namespace; the webhook configurations and the certificate
// Secret written only by name; and each role bound to the manager.
func TestTheManagersRolesAreLeastPrivilege(t *testing.T) {
	objs := kustomize(t)
	cluster := find(t, objs, "ClusterRole", "trainjob-kueue-manager-role")
	ns := find(t, objs, "Role", "trainjob-kueue-manager-role")
	if ns.GetNamespace() != namespace {
		t.Errorf("the Role is in %q, want the manager's %s", ns.GetNamespace(), namespace)
	}
	named := map[string]bool{"mutatingwebhookconfigurations": true, "validatingwebhookconfigurations": true}
	for _, role := range []*unstructured.Unstructured{cluster, ns} {
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		for _, r := range rules {
			r := r.(map[string]any)
			resources, _, _ := unstructured.NestedStringSlice(r, "resources")
			verbs, _, _ := unstructured.NestedStringSlice(r, "verbs")
			groups, _, _ := unstructured.NestedStringSlice(r, "apiGroups")
			byName, _, _ := unstructured.NestedStringSlice(r, "resourceNames")
			for _, s := range append(append(append([]string{}, resources...), verbs...), groups...) {
				if s == "*" {
					t.Errorf("%s %s: a wildcard in %v", role.GetKind(), role.GetName(), r)
				}
			}
			writes := slices.ContainsFunc(verbs, func(v string) bool { return v == "update" || v == "patch" || v == "create" || v == "delete" })
			for _, res := range resources {
				if role == cluster && (res == "secrets" || res == "leases") {
					t.Errorf("the ClusterRole grants %v on %s: only the Role in the manager's namespace may", verbs, res)
				}
				if writes && (named[res] || (res == "secrets" && role == ns)) && len(byName) == 0 {
					t.Errorf("%s %s writes %s by any name: %v", role.GetKind(), role.GetName(), res, r)
				}
			}
		}
	}
	for kind, ref := range map[string]string{"ClusterRoleBinding": "ClusterRole", "RoleBinding": "Role"} {
		b := find(t, objs, kind, "trainjob-kueue-manager-rolebinding")
		if got, _, _ := unstructured.NestedString(b.Object, "roleRef", "name"); got != "trainjob-kueue-manager-role" {
			t.Errorf("%s binds %s %q", kind, ref, got)
		}
	}
}
