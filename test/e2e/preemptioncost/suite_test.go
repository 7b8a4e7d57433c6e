// Package preemptioncost runs ClusterQueue preemption-cost policies on a
// local control plane whose Kueue honours priority boosts (its
// PriorityBoost gate on) with Trainer v2.3.0, whose TrainJobs report
// training progress (status.trainerStatus).
package preemptioncost_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/test/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/test/localcluster"
)

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
	o := localcluster.ForTests("e2e-preemption-cost", localcluster.Options{Root: root})
	// Progress is reported from Trainer v2.2; the policy is shown on the
	// newest release whatever the suite's E2E_TRAINER_VERSION.
	o.TrainerVersion, o.KueueFeatureGates = "v2.3.0", "PriorityBoost=true"
	var down func()
	cluster, down, err = localcluster.UpForTests(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "preemptioncost: %v\n", err)
		return 1
	}
	defer down()
	if k8s, err = cluster.Client(fixtures.Scheme()); err != nil {
		fmt.Fprintf(os.Stderr, "preemptioncost: %v\n", err)
		return 1
	}
	return m.Run()
}
