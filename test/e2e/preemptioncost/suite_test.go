// Package preemptioncost runs ClusterQueue preemption-cost policies on a
// local control plane whose Kueue honours priority boosts (its
// PriorityBoost gate on) with Trainer v2.3.0, whose TrainJobs report
// training progress (status.trainerStatus).
package preemptioncost_test

import (
	"context"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

var (
	ctx = context.Background()
	k8s client.Client
	// cluster is the local control plane under test (its audit log).
	cluster *localcluster.Cluster
)

func TestMain(m *testing.M) {
	// Progress is reported from Trainer v2.2; the policy is shown on the
	// newest release unless E2E_PREEMPTION_COST_TRAINER names another (make
	// test-full runs the declared-interval flip on v2.1.0).
	o := localcluster.Options{}
	o.TrainerVersion, o.KueueFeatureGates = localcluster.NewestTrainerVersion, "PriorityBoost=true"
	if v := os.Getenv("E2E_PREEMPTION_COST_TRAINER"); v != "" {
		o.TrainerVersion = v
	}
	os.Exit(localcluster.RunTests(m, "e2e-preemption-cost", o, nil, fixtures.Scheme(),
		func(c *localcluster.Cluster, k client.Client) { cluster, k8s = c, k }))
}
