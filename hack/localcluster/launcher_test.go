package localcluster

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEveryComponentHasOneLauncherAndPortsOfItsOwn(t *testing.T) {
	names, ports := map[string]bool{}, map[string]string{}
	for _, group := range launchers() {
		for _, l := range group {
			if names[l.name()] {
				t.Errorf("component %s has two launchers", l.name())
			}
			names[l.name()] = true
			p, ok := l.(portUser)
			if !ok {
				continue
			}
			for _, port := range p.ports() {
				if other, taken := ports[port]; taken {
					t.Errorf("port %q of %s is %s's too", port, l.name(), other)
				}
				ports[port] = l.name()
			}
		}
	}
	// Every binary bring-up builds but kubectl is a component it starts.
	for _, stream := range (&bringUp{o: Options{Settings: Settings{Integration: IntegrationOurs, DRA: true, Provisioning: true, OursReplicas: 2}}}).buildStreams() {
		for _, bin := range stream {
			if bin != "kubectl" && !names[bin] {
				t.Errorf("%s is built but no launcher starts it", bin)
			}
			delete(names, bin)
		}
	}
	if len(names) > 0 {
		t.Errorf("launchers whose binary is never built: %v", names)
	}
}

func TestAMultiKueueManagerRunsNoPodsAndTrainerOnlyWhereItHonoursManagedBy(t *testing.T) {
	running := func(o Options) []string {
		var out []string
		for _, group := range launchers() {
			for _, l := range group {
				if l.runs(o) {
					out = append(out, l.name())
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		settings Settings
		want     []string
	}{
		{Settings{TrainerVersion: "v2.1.0", Integration: IntegrationOurs},
			[]string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kueue", "jobset-controller-manager", "trainer-controller-manager", "trainjob-kueue"}},
		{Settings{TrainerVersion: "v2.1.0", Integration: IntegrationInTree},
			[]string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kueue", "jobset-controller-manager", "trainer-controller-manager"}},
		{Settings{TrainerVersion: "v2.1.0", Integration: IntegrationOurs, MultiKueue: MultiKueueManager},
			[]string{"etcd", "kube-apiserver", "kube-controller-manager", "kueue", "trainjob-kueue"}},
		{Settings{TrainerVersion: "v2.3.0", Integration: IntegrationOurs, MultiKueue: MultiKueueManager},
			[]string{"etcd", "kube-apiserver", "kube-controller-manager", "kueue", "trainer-controller-manager", "trainjob-kueue"}},
	} {
		if diff := cmp.Diff(tc.want, running(Options{Settings: tc.settings})); diff != "" {
			t.Errorf("%+v runs (-want +got):\n%s", tc.settings, diff)
		}
	}
}

func TestConfigurationTemplatesRenderEveryField(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]any{
		"audit-policy.yaml": struct{ TrainJobBodies bool }{true},
		"scheduler.yaml":    struct{ Kubeconfig string }{"/k"},
		"jobset.yaml":       map[string]any{"Namespace": "ns", "CertDir": "/c", "WebhookPort": 1, "MetricsPort": 2, "HealthPort": 3},
		"trainer.yaml":      map[string]any{"Namespace": "ns", "WebhookPort": 1, "MetricsPort": 2, "HealthPort": 3},
	} {
		if err := writeTemplate(name, filepath.Join(dir, name), data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A field the template names but the launcher does not give is an
	// error, not an empty value in a component's configuration.
	if err := writeTemplate("jobset.yaml", filepath.Join(dir, "x"), map[string]any{"Namespace": "ns"}); err == nil {
		t.Error("jobset.yaml rendered without its ports")
	}
}

// The local cluster is read by whoever adds a component: no file over 400
// lines, no function over 80.
func TestNoFileOver400LinesNorFunctionOver80(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n > 400 && !strings.HasSuffix(f, "_test.go") {
			t.Errorf("%s has %d lines", f, n)
		}
		file, err := parser.ParseFile(fset, f, data, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 80 {
					t.Errorf("%s: %s is %d lines", f, fn.Name.Name, n)
				}
			}
		}
	}
}
