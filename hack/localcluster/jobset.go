package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
)

// jobsetController is JobSet's controller, the release the cluster's Trainer pins
// (templates/jobset.yaml). A MultiKueue manager runs no pods, hence no
// JobSets, but keeps the CRD for Trainer's controller.
type jobsetController struct{}

func (jobsetController) name() string        { return "jobset-controller-manager" }
func (jobsetController) runs(o Options) bool { return o.MultiKueue != MultiKueueManager }
func (jobsetController) ports() []string {
	return []string{"jobset-webhook", "jobset-metrics", "jobset-health"}
}

func (jobsetController) readyURL(ports map[string]int) string {
	return fmt.Sprintf("http://127.0.0.1:%d/readyz", ports["jobset-health"])
}

// jobsetFor is the JobSet release a Trainer release pins in its go.mod.
func jobsetFor(trainerVersion string) string {
	return TrainerReleases()[trainerVersion]
}

func (jobsetController) module(b *bringUp) (string, error) {
	return ModuleDir(b.toolsDir("jobset-"+jobsetFor(b.o.TrainerVersion)), "sigs.k8s.io/jobset")
}

func (j jobsetController) start(_ context.Context, b *bringUp) error {
	cfg := b.path("config", "jobset.yaml")
	if err := writeTemplate("jobset.yaml", cfg, map[string]any{
		"Namespace": jobsetNamespace, "CertDir": b.path("certs", "webhook"),
		"WebhookPort": b.ports["jobset-webhook"], "MetricsPort": b.ports["jobset-metrics"], "HealthPort": b.ports["jobset-health"],
	}); err != nil {
		return err
	}
	return b.launch(j.name(), nil, "--config="+cfg, "--kubeconfig="+b.kubeconfig(j.name()))
}

func (j jobsetController) crds(b *bringUp) ([]string, error) {
	dir, err := j.module(b)
	if err != nil {
		return nil, err
	}
	return []string{filepath.Join(dir, "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml")}, nil
}

func (j jobsetController) serve(ctx context.Context, b *bringUp) error {
	dir, err := j.module(b)
	if err != nil {
		return err
	}
	return b.registerWebhooks(ctx, j.name(), filepath.Join(dir, "config/components/webhook/manifests.yaml"), "jobset", "jobset-webhook")
}
