// Package forecastaccuracy measures how well the expected start
// (forecast.Forecast, list's EXPECTED START) foretells when a queued
// TrainJob really starts: a benchmark on the local control plane (Trainer
// v2.3.0, whose TrainJobs carry trainerStatus), run by make
// bench-forecast, never a timed test.
package forecastaccuracy_test

import (
	"context"
	"flag"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

var (
	ctx = context.Background()
	k8s client.Client
	// ours reads with trainjob-kueue's scheme, as the CLI does (its
	// TrainJob type, explain.Forecasts).
	ours client.Client
)

func TestMain(m *testing.M) {
	// The unit tier compiles every package outside test/ and runs its
	// tests: this one has none, and boots its cluster only for the
	// benchmark (make bench-forecast).
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run())
	}
	o := localcluster.Options{}
	o.TrainerVersion = localcluster.NewestTrainerVersion
	os.Exit(localcluster.RunTests(m, "bench-forecast", o, nil, fixtures.Scheme(),
		func(c *localcluster.Cluster, k client.Client) {
			k8s = k
			var err error
			if ours, err = c.Client(scheme.New()); err != nil {
				panic(err)
			}
		}))
}
