// Package podsready runs TrainJobs on a local control plane whose Kueue
// waits for pods to be ready (waitForPodsReady, on by default since Kueue
// v0.19) with a timeout short enough to see it act: jobs that start in
// stages must not be evicted while an early stage runs, and jobs whose pods
// can never be ready must be evicted and requeued as Kueue promises.
package podsready_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/test/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/test/localcluster"
)

// podsReadyTimeout is Kueue's waitForPodsReady.timeout on this cluster.
const podsReadyTimeout = 20 * time.Second

var (
	ctx = context.Background()
	k8s client.Client
	// cluster is the local control plane under test (its audit log).
	cluster *localcluster.Cluster
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err := kueueConfig(root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "podsready: %v\n", err)
		return 1
	}
	defer os.RemoveAll(filepath.Dir(cfg))
	return localcluster.RunTests(m, "e2e-podsready", localcluster.Options{Root: root, KueueConfigFile: cfg}, fixtures.Scheme(),
		func(c *localcluster.Cluster, k client.Client) { cluster, k8s = c, k })
}

// kueueConfig is config/kueue with a short waitForPodsReady: a job whose
// pods are not ready podsReadyTimeout after admission is evicted, and
// requeued after a 2 s backoff, once.
func kueueConfig(root string) (string, error) {
	return localcluster.KueueConfigWith(root, map[string]any{"waitForPodsReady": map[string]any{
		"timeout":         podsReadyTimeout.String(),
		"recoveryTimeout": podsReadyTimeout.String(),
		"blockAdmission":  false,
		"requeuingStrategy": map[string]any{
			"timestamp":          "Eviction",
			"backoffBaseSeconds": 2,
			"backoffLimitCount":  1,
		},
	}})
}
