package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
)

// kueueManager is Kueue's controller manager, its Configuration config/kueue's
// (or KUEUE_CONFIG) rewritten for the cluster (kueueConfig), its webhooks
// and its visibility API registered on loopback.
type kueueManager struct{}

func (kueueManager) name() string      { return "kueue" }
func (kueueManager) runs(Options) bool { return true }
func (kueueManager) ports() []string {
	return []string{"kueue-webhook", "kueue-metrics", "kueue-health", "kueue-visibility"}
}

func (kueueManager) readyURL(ports map[string]int) string {
	return fmt.Sprintf("http://127.0.0.1:%d/readyz", ports["kueue-health"])
}

func (kueueManager) module(b *bringUp) (string, error) {
	return ModuleDir(b.toolsDir("kueue-"+b.o.KueueVersion), "sigs.k8s.io/kueue")
}

// configPath is where a cluster keeps the Configuration Kueue and
// trainjob-kueue run with.
func kueueConfigPath(dir string) string { return filepath.Join(dir, "config", "kueue.yaml") }

func (k kueueManager) start(_ context.Context, b *bringUp) error {
	if err := k.writeConfig(b); err != nil {
		return err
	}
	return b.launch(k.name(), []string{"KUEUE_METRICS_CERTS_DIR=" + b.path("certs", "webhook"), "KUEUE_VISIBILITY_CERTS_DIR=" + b.path("certs", "visibility")},
		"--config="+kueueConfigPath(b.c.Dir), "--kubeconfig="+b.kubeconfig(k.name()))
}

// writeConfig writes Kueue's Configuration: the built-in TrainJob
// integration on only for INTEGRATION=intree, the feature gates asked
// for, and loopback serving settings.
func (kueueManager) writeConfig(b *bringUp) error {
	src := b.o.KueueConfigFile
	if src == "" {
		src = filepath.Join(b.o.Root, "config", "kueue", "controller_manager_config.yaml")
	}
	cfg, err := readKueueConfig(src)
	if err != nil {
		return err
	}
	cfg.setIntegration(b.o.Integration)
	cfg["namespace"] = kueueNamespace
	// Out of a cluster the namespace of the lease must be named.
	le := cfg.object("leaderElection")
	if _, set := le["leaderElect"]; !set {
		le["leaderElect"] = true
	}
	le["resourceNamespace"] = kueueNamespace
	// Kueue's visibility API: served on loopback and registered as an
	// APIService (registerVisibility) where the release lets us choose
	// its port; off otherwise. With EndpointRouting the API server would
	// reach the loopback visibility server through no Service it can
	// resolve.
	gates := cfg.object("featureGates")
	if _, set := gates["VisibilityOnDemand"]; !set {
		gates["VisibilityOnDemand"] = visibilityPortConfigurable(b.o.KueueVersion) && !b.o.EndpointRouting
	}
	if err := cfg.setFeatureGates(b.o.KueueFeatureGates); err != nil {
		return err
	}
	if visibilityPortConfigurable(b.o.KueueVersion) {
		cfg["visibilityServer"] = map[string]any{"bindAddress": "127.0.0.1", "bindPort": b.ports["kueue-visibility"]}
	}
	if b.o.MultiKueue == MultiKueueManager {
		cfg.forMultiKueueManager()
	}
	if b.o.DRA {
		cfg.forDRA()
	}
	cfg["internalCertManagement"] = map[string]any{"enable": false}
	cfg["webhook"] = map[string]any{"host": "127.0.0.1", "port": b.ports["kueue-webhook"], "certDir": b.path("certs", "webhook")}
	cfg["metrics"] = map[string]any{"bindAddress": fmt.Sprintf("127.0.0.1:%d", b.ports["kueue-metrics"])}
	cfg["health"] = map[string]any{"healthProbeBindAddress": fmt.Sprintf("127.0.0.1:%d", b.ports["kueue-health"])}
	return cfg.write(kueueConfigPath(b.c.Dir))
}

func (k kueueManager) crds(b *bringUp) ([]string, error) {
	dir, err := k.module(b)
	if err != nil {
		return nil, err
	}
	return filepath.Glob(filepath.Join(dir, "config/components/crd/bases/*.yaml"))
}

func (k kueueManager) serve(ctx context.Context, b *bringUp) error {
	dir, err := k.module(b)
	if err != nil {
		return err
	}
	if err := b.registerWebhooks(ctx, k.name(), filepath.Join(dir, "config/components/webhook/manifests.yaml"), "kueue", "kueue-webhook"); err != nil {
		return err
	}
	return b.registerVisibility(ctx, kueueConfigPath(b.c.Dir))
}
