package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// trainerController is Kubeflow Trainer's controller manager (templates/trainer.yaml
// from v2.1 on; v2.0 takes flags only).
type trainerController struct{}

func (trainerController) name() string { return "trainer-controller-manager" }

// runs: a MultiKueue manager runs Trainer's controller only where it
// leaves jobs of spec.managedBy MultiKueue alone.
func (trainerController) runs(o Options) bool {
	return o.MultiKueue != MultiKueueManager || TrainerHonoursManagedBy(o.TrainerVersion)
}

func (trainerController) ports() []string {
	return []string{"trainer-webhook", "trainer-metrics", "trainer-health"}
}

func (trainerController) readyURL(ports map[string]int) string {
	return fmt.Sprintf("http://127.0.0.1:%d/readyz", ports["trainer-health"])
}

// TrainerHonoursManagedBy: Trainer's controller skips TrainJobs managed by
// another controller from v2.3 on (kubeflow/trainer#3632).
func TrainerHonoursManagedBy(version string) bool {
	for _, old := range []string{"v2.0.", "v2.1.", "v2.2."} {
		if strings.HasPrefix(version, old) {
			return false
		}
	}
	return true
}

func (trainerController) module(b *bringUp) (string, error) {
	return ModuleDir(b.toolsDir("trainer-"+b.o.TrainerVersion), "github.com/kubeflow/trainer/v2")
}

func (t trainerController) start(_ context.Context, b *bringUp) error {
	// Trainer reads its webhook certificate only from controller-runtime's
	// default directory under TMPDIR.
	tmp := b.path("trainer-tmp")
	webhookCerts := b.path("certs", "webhook")
	crt, err := os.ReadFile(filepath.Join(webhookCerts, "tls.crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(filepath.Join(webhookCerts, "tls.key"))
	if err != nil {
		return err
	}
	if err := (KeyPair{Cert: crt, Key: key}).WriteTLS(filepath.Join(tmp, "k8s-webhook-server", "serving-certs")); err != nil {
		return err
	}
	args, err := t.args(b)
	if err != nil {
		return err
	}
	return b.launch(t.name(), []string{"TMPDIR=" + tmp}, args...)
}

func (t trainerController) args(b *bringUp) ([]string, error) {
	kubeconfig := "--kubeconfig=" + b.kubeconfig(t.name())
	if strings.HasPrefix(b.o.TrainerVersion, "v2.0.") {
		// v2.0 takes flags only, and serves webhooks on every interface.
		return []string{kubeconfig,
			fmt.Sprintf("--webhook-server-port=%d", b.ports["trainer-webhook"]),
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", b.ports["trainer-health"]),
			"--metrics-bind-address=0",
		}, nil
	}
	cfg := b.path("config", "trainer.yaml")
	if err := writeTemplate("trainer.yaml", cfg, map[string]any{
		"Namespace":   trainerNamespace,
		"WebhookPort": b.ports["trainer-webhook"], "MetricsPort": b.ports["trainer-metrics"], "HealthPort": b.ports["trainer-health"],
	}); err != nil {
		return nil, err
	}
	return []string{"--config=" + cfg, kubeconfig}, nil
}

func (t trainerController) crds(b *bringUp) ([]string, error) {
	dir, err := t.module(b)
	if err != nil {
		return nil, err
	}
	return filepath.Glob(filepath.Join(dir, "manifests/base/crds/trainer.kubeflow.org_*.yaml"))
}

func (t trainerController) serve(ctx context.Context, b *bringUp) error {
	dir, err := t.module(b)
	if err != nil {
		return err
	}
	return b.registerWebhooks(ctx, t.name(), filepath.Join(dir, "manifests/base/webhook/manifests.yaml"), "trainer", "trainer-webhook")
}
