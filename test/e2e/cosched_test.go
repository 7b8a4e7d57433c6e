package e2e_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// secondCluster is a cluster of the suite's releases on Kubernetes
// v1.34.4, whose kube-scheduler is scheduler-plugins' (coscheduling),
// brought up the first time a test asks for it and taken down with the
// suite. No scheduler-plugins release builds against the default
// Kubernetes v1.37.2 (docs/local-cluster.md, "Kubernetes releases").
type secondCluster struct {
	root, name string
	settings   localcluster.Settings
	once       sync.Once
	client     client.Client
	err        error
	up         bool
}

// onSchedulerPlugins runs the rest of test t on the suite's cluster of
// scheduler-plugins' coscheduling (and without Kubernetes' Workload API):
// the suite's own cluster when it is one (or the one KUBECONFIG names),
// else the second one, its client in k8s until t ends. The suite's tests
// never run in parallel.
func onSchedulerPlugins(t *testing.T) {
	t.Helper()
	c := &schedulerPlugins
	if c.root == "" || c.settings.KubernetesVersion == localcluster.KubernetesCoscheduling ||
		(c.settings.KubernetesVersion == "" && localcluster.DefaultKubernetesVersion == localcluster.KubernetesCoscheduling) {
		return
	}
	c.once.Do(func() {
		s := c.settings
		s.KubernetesVersion = localcluster.KubernetesCoscheduling
		var cl *localcluster.Cluster
		cl, c.err = localcluster.Up(ctx, localcluster.Options{Name: c.name, Root: c.root, Progress: os.Stderr, Settings: s})
		if c.err != nil {
			return
		}
		c.up = true
		c.client, c.err = cl.Client(fixtures.Scheme())
	})
	if c.err != nil {
		t.Fatalf("the suite's coscheduling cluster (Kubernetes %s): %v", localcluster.KubernetesCoscheduling, c.err)
	}
	suite := k8s
	k8s = c.client
	t.Cleanup(func() { k8s = suite })
}

// down takes the second cluster down, if it came up (but with E2E_KEEP).
func (c *secondCluster) down() {
	if !c.up || os.Getenv("E2E_KEEP") != "" {
		return
	}
	if err := localcluster.Down(c.root, c.name, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
	}
}
