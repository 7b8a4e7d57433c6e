package localcluster

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// bringUp starts a cluster: what one Up call knows while it runs.
type bringUp struct {
	o     Options
	c     *Cluster
	start time.Time

	bins  map[string]string
	ports map[string]int
	pids  map[string]int
	cmds  map[string]command
	ca    *CA
	admin client.Client
}

func (b *bringUp) step(format string, args ...any) {
	fmt.Fprintf(b.o.Progress, "[%4.0fs] %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

func (b *bringUp) path(parts ...string) string {
	return filepath.Join(append([]string{b.c.Dir}, parts...)...)
}

func (b *bringUp) kubeconfig(who string) string { return b.path("config", who+".kubeconfig") }

func (b *bringUp) toolsDir(tool string) string { return filepath.Join(b.o.Root, "hack", "tools", tool) }

func (b *bringUp) run(ctx context.Context) error {
	b.bins, b.ports, b.pids, b.cmds = map[string]string{}, map[string]int{}, map[string]int{}, map[string]command{}
	for _, d := range []string{"config", "certs", "logs", "pids", "bin"} {
		if err := os.MkdirAll(b.path(d), 0o755); err != nil {
			return err
		}
	}
	builds := b.startBuilds(ctx)
	handedOver := false
	defer func() {
		if !handedOver {
			builds.end()
		}
	}()
	if err := b.allocatePorts(); err != nil {
		return err
	}
	if err := b.pki(); err != nil {
		return err
	}
	// etcd and kube-apiserver start, and the CRDs go in, while the rest
	// still builds; each later component starts once it is built and its
	// group's turn has come.
	for i, group := range launchers() {
		if err := b.startGroup(ctx, group, builds); err != nil {
			return err
		}
		if i == 0 {
			if err := b.install(ctx); err != nil {
				return err
			}
		}
	}
	// kubectl next to the kubeconfig, for people; no component needs it.
	linkKubectl := func() error {
		defer builds.end()
		if err := builds.waitFor(b.bins, "kubectl"); err != nil {
			return err
		}
		return os.Symlink(b.bins["kubectl"], b.path("bin", "kubectl"))
	}
	if !b.o.KubectlLater {
		if err := linkKubectl(); err != nil {
			return err
		}
	}
	if err := b.checkStaysUp(); err != nil {
		return err
	}
	st := &state{Settings: b.o.Settings, Ports: b.ports, PIDs: b.pids, Commands: b.cmds}
	if err := st.write(b.c.Dir); err != nil {
		return err
	}
	b.c.state = st
	b.step("cluster %q is up: export KUBECONFIG=%s", b.o.Name, b.c.Kubeconfig)
	if b.o.KubectlLater {
		handedOver = true
		b.c.kubectlBuilt = sync.OnceValue(linkKubectl)
	}
	return nil
}

// startGroup starts a group's components side by side, each the moment
// its binary is built, then has each serve and waits until each is ready.
func (b *bringUp) startGroup(ctx context.Context, group []launcher, builds *builds) error {
	var running []launcher
	pending := map[string]launcher{}
	for _, l := range group {
		if l.runs(b.o) {
			pending[l.name()] = l
		}
	}
	for len(pending) > 0 {
		name, err := builds.next(b.bins, slices.Sorted(maps.Keys(pending)))
		if err != nil {
			return err
		}
		l := pending[name]
		delete(pending, name)
		if err := l.start(ctx, b); err != nil {
			return fmt.Errorf("starting %s: %w", l.name(), err)
		}
		running = append(running, l)
	}
	for _, l := range running {
		if s, ok := l.(server); ok {
			if err := s.serve(ctx, b); err != nil {
				return err
			}
		}
	}
	for _, l := range running {
		if r, ok := l.(readiness); ok {
			b.step("waiting for %s to be ready", l.name())
			if err := waitReady(ctx, l.name(), b.pids[l.name()], r.readyURL(b.ports), b.c); err != nil {
				return err
			}
		}
	}
	return nil
}

// allocatePorts chooses every port a launcher asks for, whether or not
// this cluster runs it, so Port names the same listeners on every cluster.
func (b *bringUp) allocatePorts() error {
	var names []string
	for _, group := range launchers() {
		for _, l := range group {
			if p, ok := l.(portUser); ok {
				names = append(names, p.ports()...)
			}
		}
	}
	ports, err := FreePorts(len(names))
	if err != nil {
		return fmt.Errorf("choosing ports: %w", err)
	}
	for i, name := range names {
		b.ports[name] = ports[i]
	}
	return nil
}

// launch starts a component's process and records how, for Restart.
func (b *bringUp) launch(name string, env []string, args ...string) error {
	b.step("starting %s", name)
	pid, err := startProcess(b.c.Dir, name, env, b.bins[name], args...)
	if err != nil {
		return err
	}
	b.pids[name] = pid
	b.cmds[name] = command{Bin: b.bins[name], Args: args, Env: env}
	return nil
}

// waitPort waits until a component accepts connections on a port.
func (b *bringUp) waitPort(ctx context.Context, component string, port int) error {
	b.step("waiting for %s to serve on 127.0.0.1:%d", component, port)
	return poll.UntilDone(ctx, 120*time.Second, func() error {
		if err := b.c.exited(component, b.pids[component]); err != nil {
			return poll.Stop(err)
		}
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return err
		}
		return conn.Close()
	})
}

// checkStaysUp: the components without a readiness endpoint must at least
// still run once everything else is ready.
func (b *bringUp) checkStaysUp() error {
	for _, group := range launchers() {
		for _, l := range group {
			if _, ok := l.(readiness); ok || !l.runs(b.o) {
				continue
			}
			if err := b.c.exited(l.name(), b.pids[l.name()]); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitReady polls a readiness endpoint until it answers 200, giving up at
// once when the component's process exits.
func waitReady(ctx context.Context, component string, pid int, url string, c *Cluster) error {
	return poll.UntilDone(ctx, 120*time.Second, func() error {
		if err := c.exited(component, pid); err != nil {
			return poll.Stop(err)
		}
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	})
}

// exited is an error naming a component's log when its process is gone.
func (c *Cluster) exited(component string, pid int) error {
	if alive(pid) {
		return nil
	}
	return fmt.Errorf("%s exited; see %s", component, c.Logs(component))
}
