package localcluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// ProvisioningRequestModule holds the ProvisioningRequest API and its CRD
// (the release Kueue's provisioning admission check is built against).
const ProvisioningRequestModule = "k8s.io/autoscaler/cluster-autoscaler/apis"

// fakeProvisioner stands in for cluster-autoscaler's ProvisioningRequest
// support on a cluster with Settings.Provisioning: the CRD
// autoscaling.x-k8s.io ProvisioningRequest, installed before Kueue starts
// (Kueue runs its provisioning admission check controller only when the
// CRD is there at its start), and hack/fakeprovisioner (built from the
// working tree), which provisions, or fails, each request as its
// parameters ask. A MultiKueue manager runs no pods: no requests there.
type fakeProvisioner struct{}

func (fakeProvisioner) name() string { return "fake-provisioner" }
func (fakeProvisioner) runs(o Options) bool {
	return o.Provisioning && o.MultiKueue != MultiKueueManager
}

func (f fakeProvisioner) crds(b *bringUp) ([]string, error) {
	if !f.runs(b.o) {
		return nil, nil
	}
	dir, err := ModuleDir(b.o.Root, ProvisioningRequestModule)
	if err != nil {
		return nil, err
	}
	return []string{filepath.Join(dir, "config", "crd", "autoscaling.x-k8s.io_provisioningrequests.yaml")}, nil
}

func (f fakeProvisioner) start(_ context.Context, b *bringUp) error {
	return b.launch(f.name(), nil, "-kubeconfig="+b.kubeconfig(f.name()))
}

// buildFakeProvisioner builds it from the checkout at root.
func buildFakeProvisioner(ctx context.Context, root, out string, b *bringUp) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./hack/fakeprovisioner")
	cmd.Dir = root
	cmd.Stderr = b.o.Progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the fake provisioner: %w", err)
	}
	return out, nil
}
