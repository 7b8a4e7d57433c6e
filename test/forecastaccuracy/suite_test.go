// Package forecastaccuracy measures how well the expected start
// (explain.Forecast, list's EXPECTED START) foretells when a queued
// TrainJob really starts: a benchmark on the local control plane (Trainer
// v2.3.0, whose TrainJobs carry trainerStatus), run by make
// bench-forecast, never a timed test.
package forecastaccuracy_test

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
)

func TestMain(m *testing.M) {
	o := localcluster.Options{}
	o.TrainerVersion = "v2.3.0"
	os.Exit(localcluster.RunTests(m, "bench-forecast", o, nil, fixtures.Scheme(),
		func(_ *localcluster.Cluster, k client.Client) { k8s = k }))
}
