package localcluster

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// DRA names of a DRA=true cluster: the fake driver's DeviceClass, and the
// quota resource Kueue's Configuration counts its devices as.
const (
	DRADeviceClass   = "gpu.example.com"
	DRAQuotaResource = "example.com/gpu"
)

// fakeDRA is the DRA driver of a cluster with Settings.DRA: the DeviceClass
// gpu.example.com, and hack/fakedra (built from the working tree), a small
// controller that publishes a ResourceSlice of one device per
// nvidia.com/gpu of every kwok node. With it kube-controller-manager runs
// its resourceclaim controller, kube-scheduler allocates claims (its
// DynamicResources plugin, on by default) and Kueue counts the class's
// devices as example.com/gpu (kueueConfig.forDRA). A MultiKueue manager
// runs no pods: no driver there.
type fakeDRA struct{}

func (fakeDRA) name() string        { return "fake-dra-driver" }
func (fakeDRA) runs(o Options) bool { return o.DRA && o.MultiKueue != MultiKueueManager }

func (f fakeDRA) start(ctx context.Context, b *bringUp) error {
	class := map[string]any{
		"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
		"metadata": map[string]any{"name": DRADeviceClass},
		"spec": map[string]any{"selectors": []any{
			map[string]any{"cel": map[string]any{"expression": fmt.Sprintf("device.driver == %q", DRADeviceClass)}},
		}},
	}
	if err := b.apply(ctx, class); err != nil {
		return err
	}
	return b.launch(f.name(), nil, "-kubeconfig="+b.kubeconfig(f.name()))
}

// buildFakeDRA builds the driver from the checkout at root.
func buildFakeDRA(ctx context.Context, root, out string, b *bringUp) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./hack/fakedra")
	cmd.Dir = root
	cmd.Stderr = b.o.Progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the fake DRA driver: %w", err)
	}
	return out, nil
}

// draSupported: Kueue counts DRA devices from v0.18 (KueueDRAIntegration,
// beta and on by default there).
func draSupported(kueueVersion string) bool {
	var minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(kueueVersion, "v0."), "%d", &minor); err != nil {
		return false
	}
	return strings.HasPrefix(kueueVersion, "v0.") && minor >= 18
}
