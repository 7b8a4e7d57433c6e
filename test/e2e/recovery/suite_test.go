// Package recovery runs kueue#14811's class on a local control plane whose
// Kueue evicts a running job that lost a pod for longer than a short
// waitForPodsReady.recoveryTimeout, while a job just admitted keeps
// Kueue's production-like first timeout: a job started on quota an
// evicted job released must first wait for that job's pods to terminate,
// which on a loaded 2-core machine took longer than the 20 s the
// podsready tier uses (both jobs bounced between evictions and were
// deactivated).
package recovery_test

import (
	"context"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

const (
	// recoveryTimeout is Kueue's waitForPodsReady.recoveryTimeout here: a
	// running job that lost a pod for longer is evicted.
	recoveryTimeout = 20 * time.Second
	// startTimeout is its waitForPodsReady.timeout: from admission to every
	// pod ready, the evicted job's pods' termination included.
	startTimeout = 2 * time.Minute
)

var (
	ctx = context.Background()
	k8s client.Client
	// cluster is the local control plane under test (its audit log).
	cluster *localcluster.Cluster
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, "e2e-recovery", localcluster.Options{}, kueueSettings(), fixtures.Scheme(),
		func(c *localcluster.Cluster, k client.Client) { cluster, k8s = c, k }))
}

// kueueSettings are this suite's Kueue Configuration over config/kueue's:
// waitForPodsReady's timeouts above, and an evicted job requeued after a
// 2 s backoff, as often as it takes.
func kueueSettings() map[string]any {
	return map[string]any{"waitForPodsReady": map[string]any{
		"timeout":         startTimeout.String(),
		"recoveryTimeout": recoveryTimeout.String(),
		"blockAdmission":  false,
		"requeuingStrategy": map[string]any{
			"timestamp":          "Eviction",
			"backoffBaseSeconds": 2,
		},
	}}
}
