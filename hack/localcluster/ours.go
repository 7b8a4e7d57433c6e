package localcluster

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ours is a replica of trainjob-kueue's manager, built from the working
// tree, running under the RBAC config/rbac ships, with its webhooks
// (config/webhook) registered on loopback beside any service-based ones.
// With Settings.OursReplicas 2 a second replica runs beside the first
// (leader election on, as a Deployment's do) and the webhooks are called
// through the loopback Service in front of both (oursService).
type ours struct {
	// replica numbers it from 1 (0 is 1).
	replica int
}

func (o ours) second() bool { return o.replica >= 2 }

func (o ours) name() string {
	if o.second() {
		return ourReplica2
	}
	return "trainjob-kueue"
}

func (o ours) runs(opts Options) bool {
	return opts.Integration == IntegrationOurs && (!o.second() || opts.OursReplicas >= 2)
}

// port names one of the replica's listeners: webhook, metrics, health,
// pprof.
func (o ours) port(what string) string {
	if o.second() {
		return "ours2-" + what
	}
	return "ours-" + what
}

func (o ours) ports() []string {
	return []string{o.port("webhook"), o.port("metrics"), o.port("health"), o.port("pprof")}
}

func (o ours) readyURL(ports map[string]int) string {
	return fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[o.port("health")])
}

// ourReplica2 is the second replica's component name.
const ourReplica2 = "trainjob-kueue-2"

// ourComponents are the processes of trainjob-kueue on a cluster with
// these settings: its replicas, then the Service in front of them.
func ourComponents(s Settings) []string {
	if s.OursReplicas >= 2 {
		return []string{"trainjob-kueue", ourReplica2, oursService{}.name()}
	}
	return []string{"trainjob-kueue"}
}

// ourWebhookPort is the port the API server calls trainjob-kueue's
// webhooks at: the one replica's, or the Service's in front of two.
func ourWebhookPort(s Settings) string {
	if s.OursReplicas >= 2 {
		return "ours-service"
	}
	return "ours-webhook"
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
	args := o.args(b.c.Dir, b.ports, b.o.OursReplicas)
	if b.o.NoQueueCondition {
		args = append(args, "--queue-condition=false")
	}
	return b.launch(o.name(), nil, args...)
}

// args: the replica as the local cluster runs it, from the cluster's
// directory, ports and replica count alone (a switch starts it on a
// running cluster).
func (o ours) args(dir string, ports map[string]int, replicas int) []string {
	// Called at a loopback URL, one replica has no endpoint that lags its
	// stop: nothing to drain. Behind the Service it drains as in a
	// Deployment, until the Service's probe (every 250 ms) stops sending
	// it connections.
	shutdownDelay := "0s"
	if replicas >= 2 {
		shutdownDelay = "2s"
	}
	return []string{
		"--kubeconfig=" + filepath.Join(dir, "config", "trainjob-kueue.kubeconfig"),
		"--kueue-config=" + kueueConfigPath(dir),
		"--cert-management=external",
		"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", ports[o.port("webhook")]),
		"--webhook-cert-dir=" + filepath.Join(dir, "certs", "webhook"),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[o.port("metrics")]),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[o.port("health")]),
		fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", ports[o.port("pprof")]),
		"--leader-elect", "--leader-election-namespace=" + ourNamespace, "--namespace=" + ourNamespace,
		"--shutdown-delay=" + shutdownDelay,
	}
}

// serve registers the manager's webhooks at its loopback URL (the
// Service's, with two replicas), under names of their own ("local-…"):
// config/default's service-based configurations can be applied beside
// them. The second replica only waits for its port.
func (o ours) serve(ctx context.Context, b *bringUp) error {
	if err := b.waitPort(ctx, o.name(), b.ports[o.port("webhook")]); err != nil {
		return err
	}
	if o.second() {
		return nil
	}
	hooks, err := o.webhooks(b.o.Root, b.ports[ourWebhookPort(b.o.Settings)], b.ca.CertPEM)
	if err != nil {
		return err
	}
	return b.createAll(ctx, hooks)
}

func (o ours) webhooks(root string, port int, caPEM []byte) ([]client.Object, error) {
	hooks, err := WebhookConfigs(filepath.Join(root, "config", "webhook", "manifests.yaml"), o.name(),
		fmt.Sprintf("https://127.0.0.1:%d", port), caPEM, All)
	if err != nil {
		return nil, err
	}
	for _, h := range hooks {
		h.SetName("local-" + h.GetName())
	}
	return hooks, nil
}
