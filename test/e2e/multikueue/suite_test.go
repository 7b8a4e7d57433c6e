// Package multikueue runs TrainJobs through MultiKueue on three local
// control planes on loopback: a manager, which queues and dispatches, and
// two workers, each with its own kube-scheduler, kwok nodes, Kueue, JobSet
// and Trainer. trainjob-kueue runs on all three. The manager runs Trainer's
// controller only from v2.3 (earlier releases ignore spec.managedBy and
// would create JobSets there); with E2E_TRAINER_VERSION it runs on another
// Trainer release, every cluster alike. From Kueue v0.18 the workers run
// DRA too (make cluster-up DRA=true's fake driver).
package multikueue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	// kueueVersion is E2E_KUEUE_VERSION, "" for the default.
	kueueVersion string
	ctx          = context.Background()
	manager      *cluster
	worker1      *cluster
	worker2      *cluster
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	version := os.Getenv("E2E_TRAINER_VERSION")
	kueueVersion = os.Getenv("E2E_KUEUE_VERSION")
	prefix := "mk"
	for _, v := range []string{version, kueueVersion} {
		if v != "" {
			prefix += "-" + v
		}
	}
	scheme := fixtures.Scheme()

	up := func(name, role string) (*cluster, error) {
		// With a Kueue that counts DRA devices, the workers run the fake
		// DRA driver and every Kueue counts its devices, so that a job
		// can claim GPUs through DRA on its way through MultiKueue.
		settings := localcluster.Settings{TrainerVersion: version, KueueVersion: kueueVersion, MultiKueue: role, DRA: draOn()}
		if role == "" && priorityBoostOn() {
			// The workers honour a ClusterQueue's preemption-cost policy.
			settings.KueueFeatureGates = "PriorityBoost=true"
		}
		lc, err := localcluster.Up(ctx, localcluster.Options{Name: name, Root: root, Progress: os.Stderr, Settings: settings})
		if err != nil {
			return nil, fmt.Errorf("bringing up %s: %w", name, err)
		}
		c, err := lc.Client(scheme)
		if err != nil {
			return nil, err
		}
		return &cluster{name: name, lc: lc, Client: c}, nil
	}
	names := []string{prefix + "-manager", prefix + "-worker1", prefix + "-worker2"}
	if os.Getenv("E2E_KEEP") == "" {
		defer func() {
			for _, n := range names {
				if err := localcluster.Down(root, n, os.Stderr); err != nil {
					fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
				}
			}
		}()
	}
	if manager, err = up(names[0], localcluster.MultiKueueManager); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if worker1, err = up(names[1], ""); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if worker2, err = up(names[2], ""); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := localcluster.ConnectWorkers(ctx, manager.lc, map[string]*localcluster.Cluster{
		worker1.name: worker1.lc, worker2.name: worker2.lc,
	}); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: connecting the workers: %v\n", err)
		return 1
	}
	return m.Run()
}
