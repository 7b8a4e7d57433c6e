package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// Namespaces the components live in, as in their own manifests.
const (
	kueueNamespace   = "kueue-system"
	trainerNamespace = "kubeflow-system"
	jobsetNamespace  = "jobset-system"
	ourNamespace     = "trainjob-kueue-system"
)

// install creates the namespaces, every launcher's CRDs and our RBAC
// (config/rbac, and config/multikueue on a MultiKueue manager:
// trainjob-kueue runs with exactly what it ships).
func (b *bringUp) install(ctx context.Context) error {
	for _, ns := range []string{kueueNamespace, trainerNamespace, jobsetNamespace, ourNamespace} {
		if err := b.apply(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
			return err
		}
	}
	b.step("installing CRDs")
	if err := b.installCRDs(ctx); err != nil {
		return err
	}
	files := []string{filepath.Join(b.o.Root, "config", "rbac", "role.yaml"), filepath.Join(b.o.Root, "config", "rbac", "role_binding.yaml")}
	if b.o.MultiKueue == MultiKueueManager {
		files = append(files, filepath.Join(b.o.Root, "config", "multikueue", "role.yaml"))
	}
	var docs [][]byte
	for _, f := range files {
		more, err := ReadDocs(f)
		if err != nil {
			return err
		}
		docs = append(docs, more...)
	}
	for _, d := range docs {
		obj := map[string]any{}
		if err := yaml.Unmarshal(d, &obj); err != nil {
			return err
		}
		if err := b.apply(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

func (b *bringUp) installCRDs(ctx context.Context) error {
	var files []string
	for _, group := range launchers() {
		for _, l := range group {
			if s, ok := l.(crdSource); ok {
				more, err := s.crds(b)
				if err != nil {
					return fmt.Errorf("%s's CRDs: %w", l.name(), err)
				}
				files = append(files, more...)
			}
		}
	}
	crds, err := ReadCRDs(files...)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := b.admin.Create(ctx, crd); err != nil {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		if err := poll.UntilDone(ctx, 60*time.Second, func() error {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := b.admin.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("CRD %s not established", crd.Name)
		}); err != nil {
			return err
		}
	}
	return nil
}

func (b *bringUp) apply(ctx context.Context, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	if err := b.admin.Create(ctx, u); err != nil {
		return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

func (b *bringUp) createAll(ctx context.Context, objs []client.Object) error {
	for _, o := range objs {
		if err := b.admin.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// registerWebhooks points a component's webhook configurations (file, as
// its release ships them) at its loopback server once that listens, under
// names starting with prefix.
func (b *bringUp) registerWebhooks(ctx context.Context, component, file, prefix, port string) error {
	if err := b.waitPort(ctx, component, b.ports[port]); err != nil {
		return err
	}
	hooks, err := WebhookConfigs(file, prefix, fmt.Sprintf("https://127.0.0.1:%d", b.ports[port]), b.ca.CertPEM, All)
	if err != nil {
		return err
	}
	return b.createAll(ctx, hooks)
}
