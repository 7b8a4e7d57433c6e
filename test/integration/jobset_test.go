package integration_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// jobSetUser is the identity JobSet's controller manager runs as here.
const jobSetUser = "system:serviceaccount:jobset-system:jobset-controller-manager"

// startJobSet runs JobSet's controller manager, at the release this module
// requires, as a process of its own serving its webhooks on a loopback
// port. It cannot run in this process: JobSet (v0.12) and Kueue (v0.19) both
// register a feature gate TLSOptions, with different specs, with the
// process-wide gate, and linking both panics at init. The process ends with
// ctx, and with this test process however that ends.
func startJobSet(ctx context.Context, env *envtest.Environment, port int, certDir string) error {
	bin, err := jobSetBinary()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "trainjob-kueue-jobset-")
	if err != nil {
		return err
	}
	user, err := env.AddUser(envtest.User{Name: jobSetUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600); err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: "0"
`, port, certDir)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o600); err != nil {
		return err
	}
	logs, err := os.Create(filepath.Join(dir, "jobset-controller-manager.log"))
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "integration tier: JobSet controller manager logs in %s\n", logs.Name())
	cmd := exec.CommandContext(ctx, bin, "--config="+filepath.Join(dir, "config.yaml"), "--kubeconfig="+filepath.Join(dir, "kubeconfig"))
	cmd.Stdout, cmd.Stderr = logs, logs
	// Killed with this process, even when it is killed itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logs.Close()
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		err := cmd.Wait()
		logs.Close()
		if ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "integration tier: the JobSet controller manager exited: %v (logs in %s)\n", err, logs.Name())
		}
	}()
	return nil
}

// jobSetBinary is JobSet's controller manager at the release this module
// requires, from the per-machine binary cache: hack/build-tool.sh builds it
// from hack/tools/jobset-<release> the first time (minutes), as `make
// envtest-assets` builds etcd and kube-apiserver, and finds it there after.
func jobSetBinary() (string, error) {
	_, _, jobsetDir, err := componentDirs()
	if err != nil {
		return "", err
	}
	// The module cache names the directory module@version.
	_, version, ok := strings.Cut(filepath.Base(jobsetDir), "@")
	if !ok {
		return "", fmt.Errorf("no version in JobSet's module directory %s", jobsetDir)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	tool := "jobset-" + version
	if !fileExists(filepath.Join(root, "hack", "tools", tool, "go.mod")) {
		return "", fmt.Errorf("no hack/tools/%s to build JobSet's controller manager from: add it (as for the other JobSet releases) for the JobSet this module requires", tool)
	}
	cmd := exec.Command(filepath.Join(root, "hack", "build-tool.sh"), tool, "sigs.k8s.io/jobset", "jobset-controller-manager")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building JobSet's controller manager from hack/tools/%s: %w", tool, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
