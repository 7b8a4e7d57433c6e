package localcluster

import (
	"context"
	"fmt"
	"os/exec"
)

// oursService stands in for the Service in front of trainjob-kueue's two
// replicas (Settings.OursReplicas 2): hack/loopbackservice, built from the
// working tree, on the port the webhooks are registered at, handing each
// connection to a ready replica as kube-proxy would. So a replica that
// drains, restarts for a mode change or is not yet synced gets no calls,
// and the other answers them.
type oursService struct{}

func (oursService) name() string { return "trainjob-kueue-service" }
func (oursService) runs(o Options) bool {
	return o.Integration == IntegrationOurs && o.OursReplicas >= 2
}
func (oursService) ports() []string { return []string{"ours-service"} }

func (s oursService) start(_ context.Context, b *bringUp) error {
	return b.launch(s.name(), nil, s.args(b.ports)...)
}

// args: the Service's port and each replica's webhook port with its
// readiness endpoint.
func (oursService) args(ports map[string]int) []string {
	args := []string{fmt.Sprintf("-listen=127.0.0.1:%d", ports["ours-service"])}
	for _, r := range []ours{{}, {replica: 2}} {
		args = append(args, fmt.Sprintf("-backend=127.0.0.1:%d=%s", ports[r.port("webhook")], r.readyURL(ports)))
	}
	return args
}

// buildOursService builds the Service from the checkout at root.
func buildOursService(ctx context.Context, root, out string, b *bringUp) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./hack/loopbackservice")
	cmd.Dir = root
	if b != nil {
		cmd.Stderr = b.o.Progress
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the loopback Service: %w", err)
	}
	return out, nil
}
