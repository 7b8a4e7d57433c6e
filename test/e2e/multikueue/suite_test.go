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
	m0, ws, err := localcluster.UpMultiKueue(ctx, root, names, os.Stderr, func(isManager bool) localcluster.Settings {
		// With a Kueue that counts DRA devices, the workers run the fake
		// DRA driver and every Kueue counts its devices, so that a job
		// can claim GPUs through DRA on its way through MultiKueue.
		settings := localcluster.Settings{TrainerVersion: version, KueueVersion: kueueVersion, DRA: draOn()}
		if !isManager && priorityBoostOn() {
			// The workers honour a ClusterQueue's preemption-cost policy.
			settings.KueueFeatureGates = "PriorityBoost=true"
		}
		return settings
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	clusters, err := clientsOf(names, append([]*localcluster.Cluster{m0}, ws...))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	manager, worker1, worker2 = clusters[0], clusters[1], clusters[2]
	return m.Run()
}

// clientsOf pairs each local cluster with its name and a client.
func clientsOf(names []string, lcs []*localcluster.Cluster) ([]*cluster, error) {
	out := make([]*cluster, len(lcs))
	for i, lc := range lcs {
		c, err := lc.Client(fixtures.Scheme())
		if err != nil {
			return nil, err
		}
		out[i] = &cluster{name: names[i], lc: lc, Client: c}
	}
	return out, nil
}
