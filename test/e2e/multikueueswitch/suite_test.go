// Package multikueueswitch switches a whole MultiKueue set-up (a manager
// and two workers, make multikueue-up) from Kueue's built-in TrainJob
// integration to trainjob-kueue and back, live, the way make
// cluster-switch CLUSTER=<manager> does it (the runbook's order in
// docs/install.md), while jobs are dispatched throughout.
//
// It runs Trainer v2.3.0 (the manager runs Trainer's controller only from
// v2.3, and Kueue v0.19's built-in integration writes runtimePatches,
// which Trainer's CRD has from v2.2) unless E2E_TRAINER_VERSION names
// v2.2 or later, and Kueue as E2E_KUEUE_VERSION says.
package multikueueswitch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// cluster is one control plane of the set-up.
type cluster struct {
	name string
	lc   *localcluster.Cluster
	client.Client
}

var (
	ctx     = context.Background()
	manager *cluster
	worker1 *cluster
	worker2 *cluster
	// root is the checkout the switch builds trainjob-kueue from.
	root string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if root, err = filepath.Abs(filepath.Join("..", "..", "..")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	settings := localcluster.Settings{TrainerVersion: trainerVersion(os.Getenv("E2E_TRAINER_VERSION")),
		KueueVersion: os.Getenv("E2E_KUEUE_VERSION"), Integration: localcluster.IntegrationInTree, OursReplicas: 2}
	names := []string{"mks-manager", "mks-worker1", "mks-worker2"}
	if os.Getenv("E2E_KEEP") == "" {
		defer func() {
			for _, n := range names {
				if err := localcluster.Down(root, n, os.Stderr); err != nil {
					fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
				}
			}
		}()
	}
	m0, ws, err := localcluster.UpMultiKueue(ctx, root, names, os.Stderr, func(bool) localcluster.Settings { return settings })
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	clusters := make([]*cluster, len(names))
	for i, lc := range append([]*localcluster.Cluster{m0}, ws...) {
		c, err := lc.Client(fixtures.Scheme())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		clusters[i] = &cluster{name: names[i], lc: lc, Client: c}
	}
	manager, worker1, worker2 = clusters[0], clusters[1], clusters[2]
	return m.Run()
}

// trainerVersion is the Trainer release the set-up runs: v2.3.0 unless
// asked for v2.2 or later.
func trainerVersion(asked string) string {
	if strings.HasPrefix(asked, "v2.2.") || strings.HasPrefix(asked, "v2.3.") {
		return asked
	}
	if asked != "" {
		fmt.Fprintf(os.Stderr, "e2e: E2E_TRAINER_VERSION=%s: Kueue's built-in integration on a MultiKueue manager writes runtimePatches, which Trainer has from v2.2; running v2.3.0\n", asked)
	}
	return localcluster.NewestTrainerVersion
}
