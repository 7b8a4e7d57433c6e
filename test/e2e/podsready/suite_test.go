// Package podsready runs TrainJobs on a local control plane whose Kueue
// waits for pods to be ready (waitForPodsReady, on by default since Kueue
// v0.19) with a timeout short enough to see it act: jobs that start in
// stages must not be evicted while an early stage runs, and jobs whose pods
// can never be ready must be evicted and requeued as Kueue promises. Its
// Kueue runs without the JobSet integration, as many clusters do, so a
// LocalQueue named default is tried there too.
package podsready_test

import (
	"context"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// podsReadyTimeout is Kueue's waitForPodsReady.timeout on this cluster.
const podsReadyTimeout = 20 * time.Second

var (
	ctx = context.Background()
	k8s client.Client
	// cluster is the local control plane under test (its audit log).
	cluster *localcluster.Cluster
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, "e2e-podsready", localcluster.Options{}, kueueSettings(), fixtures.Scheme(),
		func(c *localcluster.Cluster, k client.Client) { cluster, k8s = c, k }))
}

// kueueSettings are this suite's Kueue Configuration over config/kueue's:
// a short waitForPodsReady. A job whose pods are not ready
// podsReadyTimeout after admission is evicted, and requeued after a 2 s
// backoff, once. Kueue's JobSet integration is off (its pod integration
// on): the other set-up in which a default LocalQueue must queue a
// TrainJob once (the main e2e tier has it on).
func kueueSettings() map[string]any {
	return map[string]any{
		"integrations": map[string]any{"frameworks": []any{"batch/job", "pod", "deployment", "statefulset"}},
		"waitForPodsReady": map[string]any{
			"timeout":         podsReadyTimeout.String(),
			"recoveryTimeout": podsReadyTimeout.String(),
			"blockAdmission":  false,
			"requeuingStrategy": map[string]any{
				"timestamp":          "Eviction",
				"backoffBaseSeconds": 2,
				"backoffLimitCount":  1,
			},
		}}
}
