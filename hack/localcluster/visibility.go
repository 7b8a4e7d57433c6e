package localcluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// frontProxyClient is the name kube-apiserver's aggregation layer presents
// to aggregated API servers.
const frontProxyClient = "front-proxy-client"

// visibilityService is the Service Kueue's APIServices name.
const visibilityService = "visibility-server"

// visibilityPortConfigurable: the release lets its visibility server's
// address be set (visibilityServer in its Configuration, v0.17+). Before,
// it binds 0.0.0.0:8082, which two local clusters cannot share.
func visibilityPortConfigurable(kueueVersion string) bool {
	return !strings.HasPrefix(kueueVersion, "v0.16.")
}

// registerVisibility serves Kueue's visibility API the way a real cluster
// does: its APIServices (from the release's own manifests) point at a
// Service, here an ExternalName one for localhost at the visibility
// server's loopback port, and kube-apiserver's aggregation layer proxies
// to it, verifying its certificate against the cluster's CA.
func (b *bringUp) registerVisibility(ctx context.Context, kueueConfig string) error {
	on, err := visibilityOn(kueueConfig)
	if err != nil || !on {
		return err
	}
	port := b.ports["kueue-visibility"]
	if err := b.waitPort(ctx, "kueue", port); err != nil {
		return fmt.Errorf("Kueue's visibility server: %w", err)
	}
	kueue, err := ModuleDir(b.toolsDir("kueue-"+b.o.KueueVersion), "sigs.k8s.io/kueue")
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(kueue, "config/components/visibility/apiservice_*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no APIService manifests in Kueue %s's config/components/visibility (%v)", b.o.KueueVersion, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: kueueNamespace, Name: visibilityService},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	objs := []client.Object{svc}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		api := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &api.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		spec, _ := api.Object["spec"].(map[string]any)
		if spec == nil {
			return fmt.Errorf("%s: no spec", f)
		}
		delete(spec, "insecureSkipTLSVerify")
		spec["caBundle"] = base64.StdEncoding.EncodeToString(b.ca.CertPEM)
		spec["service"] = map[string]any{"namespace": kueueNamespace, "name": visibilityService, "port": int64(port)}
		objs = append(objs, api)
		names = append(names, api.GetName())
	}
	if err := b.createAll(ctx, objs); err != nil {
		return err
	}
	slices.Sort(names)
	b.step("waiting for Kueue's visibility API (%s)", strings.Join(names, ", "))
	return poll.UntilDone(ctx, 90*time.Second, func() error {
		if err := b.c.exited("kueue", b.pids["kueue"]); err != nil {
			return poll.Stop(err)
		}
		for _, name := range names {
			api := &unstructured.Unstructured{}
			api.SetAPIVersion("apiregistration.k8s.io/v1")
			api.SetKind("APIService")
			if err := b.admin.Get(ctx, client.ObjectKey{Name: name}, api); err != nil {
				return err
			}
			if !available(api) {
				return fmt.Errorf("APIService %s not available: %v", name, api.Object["status"])
			}
		}
		return nil
	})
}

// available reads an APIService's Available condition.
func available(api *unstructured.Unstructured) bool {
	raw, _, _ := unstructured.NestedSlice(api.Object, "status", "conditions")
	var conditions []metav1.Condition
	for _, c := range raw {
		m, _ := c.(map[string]any)
		conditions = append(conditions, metav1.Condition{Type: fmt.Sprint(m["type"]), Status: metav1.ConditionStatus(fmt.Sprint(m["status"]))})
	}
	return apimeta.IsStatusConditionTrue(conditions, "Available")
}

// visibilityOn reads the VisibilityOnDemand gate of the Configuration
// Kueue runs with.
func visibilityOn(kueueConfig string) (bool, error) {
	data, err := os.ReadFile(kueueConfig)
	if err != nil {
		return false, err
	}
	var cfg struct {
		FeatureGates map[string]bool `json:"featureGates"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return false, err
	}
	return cfg.FeatureGates["VisibilityOnDemand"], nil
}
