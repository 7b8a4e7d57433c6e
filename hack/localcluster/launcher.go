package localcluster

import (
	"context"
	"fmt"
)

// A launcher starts one component of the cluster: its flags, its
// configuration (a template in templates/) and what it needs from the
// cluster. Adding a component is adding a file with its launcher and
// naming it in launchers.
type launcher interface {
	// name of the component: its binary, its log and pid files, the name
	// Cluster.Restart and friends take.
	name() string
	// runs tells whether a cluster with these settings runs it.
	runs(o Options) bool
	// start writes its configuration and starts its process (launch).
	start(ctx context.Context, b *bringUp) error
}

// What a launcher may also need; bring-up asks each launcher for these.
type (
	// portUser names the loopback ports the component listens on
	// (Cluster.Port), chosen before anything starts.
	portUser interface{ ports() []string }
	// crdSource names files of CRDs the cluster installs, whether or not
	// it runs the component: a MultiKueue manager has JobSet's and
	// PodGroup's kinds without their controllers.
	crdSource interface {
		crds(b *bringUp) ([]string, error)
	}
	// server is what the component does once its group has started and
	// before the next group starts: wait for its webhook server, register
	// its webhooks and APIs.
	server interface {
		serve(ctx context.Context, b *bringUp) error
	}
	// readiness is the component's readiness endpoint, given the
	// cluster's ports; a component without one must stay up.
	readiness interface {
		readyURL(ports map[string]int) string
	}
)

// launchers are the cluster's components in groups: a group's components
// start side by side, then each serves (server) before the next group
// starts. The CRDs are installed after the first group.
func launchers() [][]launcher {
	return [][]launcher{
		{etcd{}, apiServer{}},
		{controllerManager{}, scheduler{}, kwok{}, kueueManager{}, jobsetController{}, trainerController{}, fakeDRA{}, fakeProvisioner{}},
		{ours{}, ours{replica: 2}, oursService{}},
	}
}

// launcherNamed is the launcher of a component.
func launcherNamed(name string) (launcher, error) {
	for _, group := range launchers() {
		for _, l := range group {
			if l.name() == name {
				return l, nil
			}
		}
	}
	return nil, fmt.Errorf("the local cluster has no component %q", name)
}
