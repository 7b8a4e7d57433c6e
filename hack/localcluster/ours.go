package localcluster

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ours is trainjob-kueue's manager, built from the working tree, running
// under the RBAC config/rbac ships, with its webhooks (config/webhook)
// registered on loopback beside any service-based ones.
type ours struct{}

func (ours) name() string        { return "trainjob-kueue" }
func (ours) runs(o Options) bool { return o.Integration == IntegrationOurs }
func (ours) ports() []string {
	return []string{"ours-webhook", "ours-metrics", "ours-health", "ours-pprof"}
}

func (ours) readyURL(ports map[string]int) string {
	return fmt.Sprintf("http://127.0.0.1:%d/readyz", ports["ours-health"])
}

// buildOurs builds the manager from the checkout at root.
func buildOurs(ctx context.Context, root, out string, progress io.Writer) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/trainjob-kueue")
	cmd.Dir = root
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building trainjob-kueue: %w", err)
	}
	return out, nil
}

func (o ours) start(_ context.Context, b *bringUp) error {
	return b.launch(o.name(), nil, o.args(b.c.Dir, b.ports)...)
}

// args: the manager as the local cluster runs it, from the cluster's
// directory and ports alone (a switch starts it on a running cluster).
func (o ours) args(dir string, ports map[string]int) []string {
	return []string{
		"--kubeconfig=" + filepath.Join(dir, "config", o.name()+".kubeconfig"),
		"--kueue-config=" + kueueConfigPath(dir),
		"--cert-management=external",
		"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", ports["ours-webhook"]),
		"--webhook-cert-dir=" + filepath.Join(dir, "certs", "webhook"),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports["ours-metrics"]),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports["ours-health"]),
		fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", ports["ours-pprof"]),
		"--leader-elect", "--leader-election-namespace=" + ourNamespace, "--namespace=" + ourNamespace,
		// The API server calls this webhook at a loopback URL, not
		// through endpoints that lag a stop: nothing to drain.
		"--shutdown-delay=0s",
	}
}

// serve registers the manager's webhooks at its loopback URL, under names
// of their own ("local-…"): config/default's service-based configurations
// can be applied beside them.
func (o ours) serve(ctx context.Context, b *bringUp) error {
	if err := b.waitPort(ctx, o.name(), b.ports["ours-webhook"]); err != nil {
		return err
	}
	hooks, err := o.webhooks(b.o.Root, b.ports, b.ca.CertPEM)
	if err != nil {
		return err
	}
	return b.createAll(ctx, hooks)
}

func (o ours) webhooks(root string, ports map[string]int, caPEM []byte) ([]client.Object, error) {
	hooks, err := WebhookConfigs(filepath.Join(root, "config", "webhook", "manifests.yaml"), o.name(),
		fmt.Sprintf("https://127.0.0.1:%d", ports["ours-webhook"]), caPEM, All)
	if err != nil {
		return nil, err
	}
	for _, h := range hooks {
		h.SetName("local-" + h.GetName())
	}
	return hooks, nil
}
