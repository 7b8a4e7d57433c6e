package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// buildStreams are the components to build, in two streams side by side,
// each one build after another: two builds on two cores, so one's
// single-threaded steps (linking, a package nothing else waits for) leave
// the CPU to the other; more at a time would only slow each down (three
// took 3-7 times as long each). A component follows the builds it shares
// compiled packages with (hack/align's families), and the streams are of
// about equal length: the cluster is up when the longer one ends. etcd and
// kube-apiserver are built first in theirs: the cluster starts them while
// the rest still build.
func (b *bringUp) buildStreams() [][]string {
	// kube-apiserver first, the longest build (make demo and cluster-up
	// start it early, beside their own compile); then the rest of its tools
	// module, one build at a time per module (hack/component.sh), and
	// kube-scheduler, of the same family, which reuses their packages.
	controlPlane := []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"}
	// etcd, Trainer v2.1 and its JobSet are of the control plane's family
	// but share little with it beyond client-go: they build in the other
	// stream, etcd first (the API server needs it).
	jobs := []string{"etcd", "kwok", "kueue"}
	if b.o.Integration == IntegrationOurs {
		jobs = append(jobs, "trainjob-kueue")
		if (oursService{}).runs(b.o) {
			jobs = append(jobs, ourReplica2, oursService{}.name())
		}
	}
	if (fakeDRA{}).runs(b.o) {
		jobs = append(jobs, "fake-dra-driver")
	}
	if (fakeProvisioner{}).runs(b.o) {
		jobs = append(jobs, "fake-provisioner")
	}
	jobs = append(jobs, "jobset-controller-manager", "trainer-controller-manager")
	// kubectl is for people and tests, run by no launcher; the rest is
	// built only for a cluster that runs it.
	var streams [][]string
	for _, stream := range [][]string{controlPlane, jobs} {
		var kept []string
		for _, name := range stream {
			if l, err := launcherNamed(name); err != nil || l.runs(b.o) {
				kept = append(kept, name)
			}
		}
		streams = append(streams, kept)
	}
	return streams
}

// needs are the components of a group this cluster runs: the binaries to
// wait for before the group starts.
func needs(group []launcher, o Options) []string {
	var names []string
	for _, l := range group {
		if l.runs(o) {
			names = append(names, l.name())
		}
	}
	return names
}

// builds are the cluster's builds running in the background: the bring-up
// waits for the binaries it needs next, not for all of them.
type builds struct {
	g     *errgroup.Group
	ctx   context.Context // done when a build failed (or the bring-up ended)
	stop  context.CancelFunc
	ready map[string]chan struct{}

	mu   sync.Mutex
	bins map[string]string
}

// startBuilds starts building every component the cluster runs.
func (b *bringUp) startBuilds(ctx context.Context) *builds {
	return startBuilds(ctx, b.buildStreams(), b.buildOne)
}

// startBuilds runs each stream's builds one after another, the streams side
// by side. buildOne is told how many streams are building now, its own
// included: what its estimate is multiplied by.
func startBuilds(ctx context.Context, streams [][]string, buildOne func(ctx context.Context, name string, sideBySide int) (string, error)) *builds {
	ctx, stop := context.WithCancel(ctx)
	g, ctx := errgroup.WithContext(ctx)
	bs := &builds{g: g, ctx: ctx, stop: stop, ready: map[string]chan struct{}{}, bins: map[string]string{}}
	for _, stream := range streams {
		for _, name := range stream {
			bs.ready[name] = make(chan struct{})
		}
	}
	var building atomic.Int32
	building.Store(int32(len(streams)))
	for _, stream := range streams {
		g.Go(func() error {
			defer building.Add(-1)
			for _, name := range stream {
				bin, err := buildOne(ctx, name, int(building.Load()))
				if err != nil {
					return err
				}
				bs.mu.Lock()
				bs.bins[name] = bin
				bs.mu.Unlock()
				close(bs.ready[name])
			}
			return nil
		})
	}
	return bs
}

// waitFor waits until the named components are built (all of them with no
// names) and records their binaries in bins; a failed build is its error.
func (bs *builds) waitFor(bins map[string]string, names ...string) error {
	if len(names) == 0 {
		for name := range bs.ready {
			names = append(names, name)
		}
	}
	for _, name := range names {
		ready, ok := bs.ready[name]
		if !ok {
			return fmt.Errorf("no build of %s was started", name)
		}
		select {
		case <-ready:
		case <-bs.ctx.Done():
			if err := bs.g.Wait(); err != nil {
				return err
			}
			return bs.ctx.Err()
		}
		bs.mu.Lock()
		bins[name] = bs.bins[name]
		bs.mu.Unlock()
	}
	return nil
}

// next waits until one of the named components is built, records its
// binary in bins and returns its name: the first of names already built,
// else the first to be built. A failed build is its error.
func (bs *builds) next(bins map[string]string, names []string) (string, error) {
	for {
		for _, name := range names {
			ready, ok := bs.ready[name]
			if !ok {
				return "", fmt.Errorf("no build of %s was started", name)
			}
			select {
			case <-ready:
				return name, bs.waitFor(bins, name)
			default:
			}
		}
		select {
		case <-bs.ctx.Done():
			if err := bs.g.Wait(); err != nil {
				return "", err
			}
			return "", bs.ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// end stops the builds still running and waits for them: none outlives
// the bring-up that started it.
func (bs *builds) end() {
	bs.stop()
	_ = bs.g.Wait()
}

// buildOne builds a component into the machine's binary cache (or finds it
// there) and returns its path; trainjob-kueue goes to the cluster's bin/.
func (b *bringUp) buildOne(ctx context.Context, name string, sideBySide int) (string, error) {
	switch name {
	case "trainjob-kueue":
		b.step("binary trainjob-kueue (from the working tree)")
		return buildOurs(ctx, b.o.Root, b.path("bin", "trainjob-kueue"), b.o.Progress)
	case ourReplica2:
		// The same binary, built just before it in its stream.
		return b.path("bin", "trainjob-kueue"), nil
	case oursService{}.name():
		b.step("binary %s (hack/loopbackservice, from the working tree)", name)
		return buildOursService(ctx, b.o.Root, b.path("bin", name), b)
	case "fake-provisioner":
		b.step("binary fake-provisioner (hack/fakeprovisioner, from the working tree)")
		return buildFakeProvisioner(ctx, b.o.Root, b.path("bin", "fake-provisioner"), b)
	case "fake-dra-driver":
		b.step("binary fake-dra-driver (hack/fakedra, from the working tree)")
		return buildFakeDRA(ctx, b.o.Root, b.path("bin", "fake-dra-driver"), b)
	}
	b.step("binary %s", name)
	cmd := exec.CommandContext(ctx, filepath.Join(b.o.Root, "hack", "component.sh"), name)
	cmd.Env = append(os.Environ(), "TRAINER_VERSION="+b.o.TrainerVersion, "KUEUE_VERSION="+b.o.KueueVersion, "KUBE_VERSION="+b.o.KubernetesVersion,
		fmt.Sprintf("BUILDS_SIDE_BY_SIDE=%d", sideBySide))
	cmd.Stderr = b.o.Progress
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}
