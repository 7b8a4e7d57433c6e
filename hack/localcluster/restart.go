package localcluster

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// Restart kills one component of a running cluster with SIGKILL, as a
// crash would (no shutdown hooks, no lease released), starts it again as
// it was started, and waits until it serves (its readiness endpoint, where
// it has one). Its log continues in the same file.
func (c *Cluster) Restart(ctx context.Context, component string) error {
	if err := c.Crash(component); err != nil {
		return err
	}
	return c.Start(ctx, component)
}

// Crash kills one component with SIGKILL and waits until it is gone; Start
// brings it back.
func (c *Cluster) Crash(component string) error {
	pid, ok := c.state.PIDs[component]
	if !ok {
		return fmt.Errorf("cluster %s runs no %s", c.Dir, component)
	}
	// Components run in sessions of their own: the group is the process
	// and whatever it started.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	// Gone means reaped, not only a zombie: the leader thread of a
	// process turns zombie while its other threads still exit and hold
	// its listening sockets, and a successor would find its ports in use.
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			if alive(pid) {
				return fmt.Errorf("%s (pid %d) survived SIGKILL for 10s", component, pid)
			}
			// A zombie nobody reaps (its parent is not us): its threads
			// have had 10 s to exit.
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Start starts a component that Crash stopped, as the cluster started it,
// and waits until it serves.
func (c *Cluster) Start(ctx context.Context, component string) error {
	cmd, ok := c.state.Commands[component]
	if !ok {
		return fmt.Errorf("cluster %s has no record of how %s was started (started by an older version: bring it down and up)", c.Dir, component)
	}
	if alive(c.state.PIDs[component]) {
		return fmt.Errorf("%s is running (pid %d)", component, c.state.PIDs[component])
	}
	pid, err := startProcess(c.Dir, component, cmd.Env, cmd.Bin, cmd.Args...)
	if err != nil {
		return err
	}
	c.state.PIDs[component] = pid
	if err := c.state.write(c.Dir); err != nil {
		return err
	}
	return c.waitServing(ctx, component)
}

// waitServing waits for a component's readiness endpoint (the API
// server's, or its launcher's); components without one must be running.
func (c *Cluster) waitServing(ctx context.Context, component string) error {
	pid := c.state.PIDs[component]
	if component == "kube-apiserver" {
		return poll.UntilDone(ctx, 120*time.Second, func() error {
			if err := c.exited(component, pid); err != nil {
				return poll.Stop(err)
			}
			return httpsOK(fmt.Sprintf("https://127.0.0.1:%d/readyz", c.Port("apiserver")), c.Kubeconfig)
		})
	}
	l, err := launcherNamed(component)
	if err != nil {
		return err
	}
	if r, ok := l.(readiness); ok {
		return waitReady(ctx, component, pid, r.readyURL(c.state.Ports), c)
	}
	return c.exited(component, pid)
}

// Running tells whether a component of the cluster is running.
func (c *Cluster) Running(component string) bool { return alive(c.state.PIDs[component]) }

// Components the cluster started, by name.
func (c *Cluster) Components() []string {
	names := make([]string, 0, len(c.state.Commands))
	for name := range c.state.Commands {
		names = append(names, name)
	}
	return names
}
