package install

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

type valueCase struct {
	name      string
	namespace string // the release's; the default one when empty
	values    map[string]any
	check     func(t *testing.T, objs []*unstructured.Unstructured, m manager)
}

// Every value of values.yaml, set to something other than its default, and
// what it must change. TestEveryValueIsExercised keeps this complete.
var valueCases = []valueCase{
	{
		name:   "a MultiKueue manager reading its workers' kubeconfig Secrets, in Kueue's namespace",
		values: map[string]any{"multikueue": map[string]any{"workerAccess": true, "kueueNamespace": "batch-system", "kubeconfigSecrets": []any{"gpu-east-kubeconfig"}}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, _ manager) {
			role, binding := find(t, objs, "Role", "trainjob-kueue-multikueue-role"), find(t, objs, "RoleBinding", "trainjob-kueue-multikueue-rolebinding")
			if role.GetNamespace() != "batch-system" || binding.GetNamespace() != "batch-system" {
				t.Errorf("Role in %q, RoleBinding in %q, want Kueue's batch-system", role.GetNamespace(), binding.GetNamespace())
			}
			rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
			if got := fmt.Sprint(rules); got != "[map[apiGroups:[] resourceNames:[gpu-east-kubeconfig] resources:[secrets] verbs:[get]]]" {
				t.Errorf("rules %s, want get on the workers' kubeconfig Secrets alone", got)
			}
			subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
			if sa := subjects[0].(map[string]any); sa["namespace"] != namespace || sa["name"] != "trainjob-kueue-controller-manager" {
				t.Errorf("bound to %v, want the manager's ServiceAccount in the release namespace", sa)
			}
		},
	},
	{
		name: "a PodMonitor scraping the secure metrics with a token",
		values: map[string]any{"monitoring": map[string]any{"podMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}, "interval": "15s",
			"bearerTokenSecret": map[string]any{"name": "prometheus-token", "key": "bearer"}}}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, _ manager) {
			pm := find(t, objs, "PodMonitor", "trainjob-kueue")
			ep := pm.Object["spec"].(map[string]any)["podMetricsEndpoints"].([]any)[0].(map[string]any)
			creds := ep["authorization"].(map[string]any)["credentials"].(map[string]any)
			if ep["port"] != "metrics" || ep["interval"] != "15s" || ep["scheme"] != "https" || creds["name"] != "prometheus-token" || creds["key"] != "bearer" {
				t.Errorf("endpoint %v", ep)
			}
			if pm.GetLabels()["release"] != "prom" {
				t.Errorf("labels %v", pm.GetLabels())
			}
		},
	},
	{
		name: "alerts with their thresholds",
		values: map[string]any{"monitoring": map[string]any{"prometheusRule": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"},
			"heldForRuntimeMinutes": 30, "admittedNotStartedMinutes": 5}}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, _ manager) {
			rule := find(t, objs, "PrometheusRule", "trainjob-kueue")
			rules := rule.Object["spec"].(map[string]any)["groups"].([]any)[0].(map[string]any)["rules"].([]any)
			got := map[string]map[string]any{}
			for _, r := range rules {
				r := r.(map[string]any)
				got[r["alert"].(string)] = r
			}
			if len(got) != 4 || got["TrainJobHeldForMissingRuntime"]["for"] != "30m" || !strings.Contains(got["TrainJobAdmittedNotStarted"]["expr"].(string), "> 300") {
				t.Errorf("alerts %v", got)
			}
			for name, r := range got {
				if d := r["annotations"].(map[string]any)["description"].(string); !strings.Contains(d, "Fix:") {
					t.Errorf("alert %s names no fix: %s", name, d)
				}
			}
			if rule.GetLabels()["release"] != "prom" {
				t.Errorf("labels %v", rule.GetLabels())
			}
		},
	},
	{
		name:   "the Grafana dashboard",
		values: map[string]any{"monitoring": map[string]any{"dashboard": map[string]any{"enabled": true, "labels": map[string]any{"grafana_dashboard": "team"}}}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, _ manager) {
			cm := find(t, objs, "ConfigMap", "trainjob-kueue-dashboard")
			var dash map[string]any
			if err := json.Unmarshal([]byte(cm.Object["data"].(map[string]any)["trainjob-kueue.json"].(string)), &dash); err != nil || dash["uid"] != "trainjob-kueue" {
				t.Errorf("dashboard %v: %v", dash["uid"], err)
			}
			if cm.GetLabels()["grafana_dashboard"] != "team" {
				t.Errorf("labels %v", cm.GetLabels())
			}
		},
	},
	{
		name:   "image repository, tag and pull policy",
		values: map[string]any{"image": map[string]any{"repository": "registry.example.com/team/trainjob-kueue", "tag": "v9.9.9", "pullPolicy": "IfNotPresent"}},
		check: func(t *testing.T, _ []*unstructured.Unstructured, m manager) {
			if got := m.container["image"]; got != "registry.example.com/team/trainjob-kueue:v9.9.9" {
				t.Errorf("image %v", got)
			}
			if got := m.container["imagePullPolicy"]; got != "IfNotPresent" {
				t.Errorf("imagePullPolicy %v", got)
			}
		},
	},
	{
		name:   "image tag defaults to the chart's appVersion",
		values: map[string]any{"image": map[string]any{"repository": "registry.example.com/trainjob-kueue"}},
		check: func(t *testing.T, _ []*unstructured.Unstructured, m manager) {
			if got, want := m.container["image"], "registry.example.com/trainjob-kueue:"+appVersion(t); got != want {
				t.Errorf("image %v, want %s", got, want)
			}
			if _, ok := m.container["imagePullPolicy"]; ok {
				t.Errorf("imagePullPolicy %v rendered for an empty pullPolicy", m.container["imagePullPolicy"])
			}
		},
	},
	{
		name:   "more replicas",
		values: map[string]any{"replicas": 3},
		check: func(t *testing.T, _ []*unstructured.Unstructured, m manager) {
			if got := m.replicas(); got != 3 {
				t.Errorf("replicas %d", got)
			}
			wantArg(t, m, "leader-elect", "true")
		},
	},
	{
		name:   "one replica without leader election",
		values: map[string]any{"replicas": 1, "leaderElection": false},
		check: func(t *testing.T, _ []*unstructured.Unstructured, m manager) {
			if got := m.replicas(); got != 1 {
				t.Errorf("replicas %d", got)
			}
			wantNoArg(t, m, "leader-elect")
		},
	},
	{
		name:   "feature gates",
		values: map[string]any{"featureGates": map[string]any{"TopologyAwareScheduling": true, "MultiKueue": false}},
		check: func(t *testing.T, _ []*unstructured.Unstructured, m manager) {
			wantArg(t, m, "feature-gates", "MultiKueue=false,TopologyAwareScheduling=true")
		},
	},
	{
		name:   "inline Kueue configuration",
		values: map[string]any{"kueueConfig": map[string]any{"inline": inlineKueueConfig}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, m manager) {
			cm := find(t, objs, "ConfigMap", "trainjob-kueue-kueue-config")
			if got, _, _ := unstructured.NestedString(cm.Object, "data", "controller_manager_config.yaml"); got != inlineKueueConfig {
				t.Errorf("inline Kueue configuration rendered as %q", got)
			}
			if got, _, _ := unstructured.NestedString(m.volume("kueue-config"), "configMap", "name"); got != "trainjob-kueue-kueue-config" {
				t.Errorf("kueue-config volume from ConfigMap %q", got)
			}
		},
	},
	{
		name:   "existing Kueue configuration ConfigMap",
		values: map[string]any{"kueueConfig": map[string]any{"existingConfigMap": "my-kueue-config"}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, m manager) {
			if got, _, _ := unstructured.NestedString(m.volume("kueue-config"), "configMap", "name"); got != "my-kueue-config" {
				t.Errorf("kueue-config volume from ConfigMap %q", got)
			}
			for _, o := range objs {
				if o.GetKind() == "ConfigMap" {
					t.Errorf("%s rendered although the values provide it", key(o))
				}
			}
		},
	},
	{
		name:   "metrics on another port, plain HTTP",
		values: map[string]any{"metrics": map[string]any{"bindAddress": ":9090", "secure": false}},
		check: func(t *testing.T, _ []*unstructured.Unstructured, m manager) {
			wantArg(t, m, "metrics-bind-address", ":9090")
			wantArg(t, m, "metrics-secure", "false")
			if got, ok := m.port("metrics"); !ok || got != 9090 {
				t.Errorf("metrics containerPort %d (%v), want 9090", got, ok)
			}
		},
	},
	{
		name:   "metrics off",
		values: map[string]any{"metrics": map[string]any{"bindAddress": "0"}},
		check: func(t *testing.T, _ []*unstructured.Unstructured, m manager) {
			wantArg(t, m, "metrics-bind-address", "0")
			if got, ok := m.port("metrics"); ok {
				t.Errorf("metrics containerPort %d with metrics off", got)
			}
		},
	},
	{
		name:   "webhook port",
		values: map[string]any{"webhook": map[string]any{"port": 10443}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, m manager) {
			wantArg(t, m, "webhook-port", "10443")
			if got, ok := m.port("webhook-server"); !ok || got != 10443 {
				t.Errorf("webhook-server containerPort %d (%v), want 10443", got, ok)
			}
			// The Service targets the port by name, so it follows.
			svc := find(t, objs, "Service", "trainjob-kueue-webhook-service")
			ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
			if len(ports) != 1 || ports[0].(map[string]any)["targetPort"] != "webhook-server" {
				t.Errorf("webhook Service ports %v, want the named port webhook-server", ports)
			}
		},
	},
	{
		name:   "certificate Secret of another name, internal certificates",
		values: map[string]any{"webhook": map[string]any{"certSecretName": "my-webhook-cert"}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, m manager) {
			wantArg(t, m, "webhook-secret-name", "my-webhook-cert")
			wantNoArg(t, m, "cert-management") // internal, the default
			if got := m.certSecret(); got != "my-webhook-cert" {
				t.Errorf("certs volume from Secret %q", got)
			}
			if !has(objs, "Secret", namespace, "my-webhook-cert") {
				t.Error("no Secret my-webhook-cert rendered for the rotator to fill")
			}
			if got := secretRoleNames(t, objs, namespace); !slices.Equal(got, []string{"my-webhook-cert"}) {
				t.Errorf("the Role lets the manager update Secrets %v, not the one it writes", got)
			}
			for _, o := range objs {
				if strings.Contains(fmt.Sprint(o.Object), defaultCertSecret) {
					t.Errorf("%s still names %s", key(o), defaultCertSecret)
				}
			}
		},
	},
	{
		name:   "external certificates",
		values: map[string]any{"webhook": map[string]any{"certManagement": "external", "certSecretName": "from-cert-manager"}},
		check: func(t *testing.T, objs []*unstructured.Unstructured, m manager) {
			wantArg(t, m, "cert-management", "external")
			wantArg(t, m, "webhook-secret-name", "from-cert-manager")
			if got := m.certSecret(); got != "from-cert-manager" {
				t.Errorf("certs volume from Secret %q", got)
			}
			for _, o := range objs {
				if o.GetKind() == "Secret" {
					t.Errorf("%s rendered although cert-manager provides it", key(o))
				}
			}
			if got := secretRoleNames(t, objs, namespace); !slices.Equal(got, []string{"from-cert-manager"}) {
				t.Errorf("the Role names Secrets %v", got)
			}
		},
	},
	{
		name: "resources",
		values: map[string]any{"resources": map[string]any{
			"requests": map[string]any{"cpu": "250m", "memory": "256Mi"},
			"limits":   map[string]any{"cpu": "2", "memory": "1Gi"},
		}},
		check: func(t *testing.T, _ []*unstructured.Unstructured, m manager) {
			want := map[string]any{
				"requests": map[string]any{"cpu": "250m", "memory": "256Mi"},
				"limits":   map[string]any{"cpu": "2", "memory": "1Gi"},
			}
			if diff := cmp.Diff(want, m.container["resources"]); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
		},
	},
	{
		name:      "another release namespace",
		namespace: "ml-queueing",
		check: func(t *testing.T, objs []*unstructured.Unstructured, m manager) {
			if m.deploy.GetNamespace() != "ml-queueing" {
				t.Errorf("Deployment in %s", m.deploy.GetNamespace())
			}
			for _, o := range objs {
				if strings.Contains(fmt.Sprint(o.Object), namespace) {
					t.Errorf("%s still names namespace %s", key(o), namespace)
				}
			}
			if got := secretRoleNames(t, objs, "ml-queueing"); !slices.Equal(got, []string{defaultCertSecret}) {
				t.Errorf("the Role names Secrets %v", got)
			}
			for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
				for _, o := range objs {
					if o.GetKind() != kind {
						continue
					}
					hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
					for _, h := range hooks {
						ns, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "namespace")
						if ns != "ml-queueing" {
							t.Errorf("%s calls the webhook Service in %q", key(o), ns)
						}
						if skipped := excludedNamespaces(h.(map[string]any)); !skipped["ml-queueing"] || !skipped["kube-system"] {
							t.Errorf("%s intercepts the manager's namespace or kube-system (skips %v)", key(o), slices.Sorted(maps.Keys(skipped)))
						}
					}
				}
			}
		},
	},
}

const inlineKueueConfig = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nmanageJobsWithoutQueueName: false\n"

func TestHelmValues(t *testing.T) {
	for _, tc := range valueCases {
		t.Run(tc.name, func(t *testing.T) {
			ns := tc.namespace
			if ns == "" {
				ns = namespace
			}
			objs, err := renderHelm(ns, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, objs, managerOf(t, objs))
		})
	}
}

// Values the chart refuses, saying why, rather than render a broken install.
func TestHelmRefusesInconsistentValues(t *testing.T) {
	for name, tc := range map[string]struct {
		values map[string]any
		says   string
	}{
		"several replicas without leader election":       {map[string]any{"replicas": 2, "leaderElection": false}, "leaderElection"},
		"inline and existing Kueue configuration":        {map[string]any{"kueueConfig": map[string]any{"inline": inlineKueueConfig, "existingConfigMap": "x"}}, "not both"},
		"unknown certificate management":                 {map[string]any{"webhook": map[string]any{"certManagement": "manual"}}, "internal or external"},
		"metrics address without a port":                 {map[string]any{"metrics": map[string]any{"bindAddress": "localhost"}}, "metrics.bindAddress"},
		"no image repository":                            {map[string]any{"image": map[string]any{"repository": ""}}, "image.repository"},
		"a PodMonitor of secure metrics without a token": {map[string]any{"monitoring": map[string]any{"podMonitor": map[string]any{"enabled": true}}}, "bearerTokenSecret.name"},
		"a PodMonitor without metrics":                   {map[string]any{"metrics": map[string]any{"bindAddress": "0"}, "monitoring": map[string]any{"podMonitor": map[string]any{"enabled": true}}}, "needs metrics"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := renderHelm(namespace, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("rendered with error %v, want one saying %q", err, tc.says)
			}
		})
	}
}

// leaves flattens values into dotted paths; an empty map is a leaf.
func leaves(prefix string, v any, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		out[prefix] = v
		return
	}
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		leaves(p, v, out)
	}
}

// Every value in values.yaml is set to a value other than its default by
// some case of TestHelmValues: a value no render exercises is a value whose
// effect nobody checked (as certSecretName and the Role once were).
func TestEveryValueIsExercised(t *testing.T) {
	data, err := os.ReadFile("../../charts/trainjob-kueue/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var defaults map[string]any
	if err := yaml.Unmarshal(data, &defaults); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	leaves("", defaults, want)
	set := map[string][]any{}
	for _, tc := range valueCases {
		got := map[string]any{}
		// Through YAML, so numbers compare as values.yaml's do.
		b, _ := yaml.Marshal(tc.values)
		var vals map[string]any
		_ = yaml.Unmarshal(b, &vals)
		leaves("", vals, got)
		for p, v := range got {
			set[p] = append(set[p], v)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		exercised := false
		for q, vs := range set {
			if q == p && slices.ContainsFunc(vs, func(v any) bool { return !reflect.DeepEqual(v, want[p]) }) {
				exercised = true
			}
			// A default empty map (featureGates: {}) given entries.
			if m, ok := want[p].(map[string]any); ok && len(m) == 0 && strings.HasPrefix(q, p+".") {
				exercised = true
			}
		}
		if !exercised {
			t.Errorf("values.yaml's %s is never rendered with another value than its default %v: add a case to valueCases", p, want[p])
		}
	}
}
