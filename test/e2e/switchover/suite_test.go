// Package switchover switches a live cluster's TrainJobs from Kueue's
// built-in TrainJob integration to trainjob-kueue (make cluster-switch,
// localcluster.Cluster.Switch) with jobs in every state, and back, and
// checks that no job is restarted, lost, counted
// twice or sent to the back of its queue, and that none escapes the queue
// while the two hand over.
package switchover_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

var (
	ctx     = context.Background()
	k8s     client.Client
	cluster *localcluster.Cluster
	// root is the checkout the switch builds trainjob-kueue from.
	root string
)

func TestMain(m *testing.M) {
	// Kueue v0.19.2 with Trainer v2.3.0 unless told (make test-full runs
	// Kueue v0.16.2 with Trainer v2.1.0 too: E2E_KUEUE_VERSION,
	// E2E_TRAINER_VERSION).
	o := localcluster.Options{}
	o.Integration = localcluster.IntegrationInTree
	if os.Getenv("E2E_TRAINER_VERSION") == "" {
		o.TrainerVersion = localcluster.NewestTrainerVersion
	}
	// E2E_REPLICAS=2 runs two replicas of ours behind a loopback Service,
	// as deployed (make test-full runs the suite with one and with two).
	if os.Getenv("E2E_REPLICAS") == "2" {
		o.OursReplicas = 2
	}
	var kueue map[string]any
	if strings.HasPrefix(os.Getenv("E2E_KUEUE_VERSION"), "v0.16.") {
		// The runbook's way around Kueue v0.16's copied queue label:
		// Kueue's JobSet integration off for the switch (docs/install.md).
		kueue = map[string]any{"integrations": map[string]any{"frameworks": []any{"batch/job"}}}
	}
	os.Exit(localcluster.RunTests(m, "e2e-switch", o, kueue, fixtures.Scheme(),
		func(c *localcluster.Cluster, k client.Client) {
			cluster, k8s = c, k
			root = filepath.Dir(filepath.Dir(c.Dir))
		}))
}
