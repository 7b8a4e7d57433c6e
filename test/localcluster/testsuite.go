package localcluster

import (
	"context"
	"fmt"
	"os"
)

// ForTests names a test suite's cluster after base and the releases the
// suite runs on (E2E_TRAINER_VERSION, E2E_KUEUE_VERSION), so suites and
// releases never share one, and fills o's settings with those releases.
func ForTests(base string, o Options) Options {
	o.TrainerVersion, o.KueueVersion = os.Getenv("E2E_TRAINER_VERSION"), os.Getenv("E2E_KUEUE_VERSION")
	o.Name = base
	for _, v := range []string{o.TrainerVersion, o.KueueVersion} {
		if v != "" {
			o.Name += "-" + v
		}
	}
	if o.Progress == nil {
		o.Progress = os.Stderr
	}
	return o
}

// UpForTests brings up the cluster o names (ForTests) and returns it with
// what takes it down again: nothing when E2E_KEEP is set, to look at it
// afterwards.
func UpForTests(ctx context.Context, o Options) (*Cluster, func(), error) {
	c, err := Up(ctx, o)
	if err != nil {
		return nil, nil, fmt.Errorf("bringing up the local control plane %s: %w", o.Name, err)
	}
	down := func() {
		if os.Getenv("E2E_KEEP") != "" {
			return
		}
		if err := Down(o.Root, o.Name, o.Progress); err != nil {
			fmt.Fprintf(o.Progress, "%s: %v\n", o.Name, err)
		}
	}
	return c, down, nil
}
