// Package dra runs TrainJobs whose runtimes claim GPUs through Dynamic
// Resource Allocation on a local control plane with DRA (make cluster-up
// DRA=true: the fake driver gpu.example.com, Kueue counting its devices as
// example.com/gpu), Kueue v0.19.2 and Trainer v2.3.0.
package dra_test

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
	// cluster is the local control plane under test.
	cluster *localcluster.Cluster
)

func TestMain(m *testing.M) {
	o := localcluster.Options{}
	o.TrainerVersion, o.DRA = localcluster.NewestTrainerVersion, true
	os.Exit(localcluster.RunTests(m, "e2e-dra", o, nil, fixtures.Scheme(),
		func(c *localcluster.Cluster, k client.Client) { cluster, k8s = c, k }))
}
