package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// buildStreams are the components to build, in groups that share compiled
// packages (hack/align's families; trainjob-kueue, built from the working
// tree, with the main module's). Within a group one after another, so its
// first build compiles what the others reuse; the groups side by side, so
// one group's single-threaded steps (linking, a package nothing else waits
// for) leave the CPU to the others: a cold start takes minutes less.
func (b *bringUp) buildStreams() [][]string {
	streams := [][]string{
		{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"},
		{"kube-scheduler", "jobset-controller-manager", "trainer-controller-manager"},
		{"kwok", "kueue"},
	}
	if b.o.Integration == IntegrationOurs {
		streams[2] = append(streams[2], "trainjob-kueue")
		if (oursService{}).runs(b.o) {
			streams[2] = append(streams[2], ourReplica2, oursService{}.name())
		}
	}
	if (fakeDRA{}).runs(b.o) {
		streams[0] = append(streams[0], "fake-dra-driver")
	}
	if (fakeProvisioner{}).runs(b.o) {
		streams[0] = append(streams[0], "fake-provisioner")
	}
	return streams
}

func (b *bringUp) build(ctx context.Context) error {
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	for _, stream := range b.buildStreams() {
		g.Go(func() error {
			for _, name := range stream {
				bin, err := b.buildOne(ctx, name)
				if err != nil {
					return err
				}
				mu.Lock()
				b.bins[name] = bin
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// kubectl next to the kubeconfig, for people.
	return os.Symlink(b.bins["kubectl"], b.path("bin", "kubectl"))
}

// buildOne builds a component into the machine's binary cache (or finds it
// there) and returns its path; trainjob-kueue goes to the cluster's bin/.
func (b *bringUp) buildOne(ctx context.Context, name string) (string, error) {
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
	cmd.Env = append(os.Environ(), "TRAINER_VERSION="+b.o.TrainerVersion, "KUEUE_VERSION="+b.o.KueueVersion)
	cmd.Stderr = b.o.Progress
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}
