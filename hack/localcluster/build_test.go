package localcluster

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeBuilds builds each name when the test releases it (a closed
// channel), or fails it with the error the test gives.
type fakeBuilds struct {
	release map[string]chan struct{}
	fail    map[string]error
	// sideBySide records what each build was told, if not nil.
	sideBySide map[string]int
	mu         sync.Mutex
}

func (f *fakeBuilds) build(ctx context.Context, name string, sideBySide int) (string, error) {
	if f.sideBySide != nil {
		f.mu.Lock()
		f.sideBySide[name] = sideBySide
		f.mu.Unlock()
	}
	if err := f.fail[name]; err != nil {
		return "", err
	}
	if r, ok := f.release[name]; ok {
		select {
		case <-r:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return "/bin/" + name, nil
}

// etcd and kube-apiserver are handed over the moment they are built, while
// the rest still builds: the cluster starts them in the meantime.
func TestTheFirstComponentsAreHandedOverWhileTheRestBuilds(t *testing.T) {
	f := &fakeBuilds{release: map[string]chan struct{}{"kube-controller-manager": make(chan struct{}), "kueue": make(chan struct{})}}
	bs := startBuilds(t.Context(), [][]string{{"etcd", "kube-apiserver", "kube-controller-manager"}, {"kwok", "kueue"}}, f.build)
	defer bs.end()
	bins := map[string]string{}
	if err := bs.waitFor(bins, "etcd", "kube-apiserver"); err != nil {
		t.Fatalf("waiting for etcd and kube-apiserver: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"etcd": "/bin/etcd", "kube-apiserver": "/bin/kube-apiserver"}, bins); diff != "" {
		t.Errorf("binaries handed over (-want +got):\n%s", diff)
	}
	close(f.release["kube-controller-manager"])
	close(f.release["kueue"])
	if err := bs.waitFor(bins); err != nil {
		t.Fatalf("waiting for all: %v", err)
	}
	if len(bins) != 5 {
		t.Errorf("after all were built, binaries %v, want 5", bins)
	}
}

// A failed build is the error of whoever waits for any binary not yet
// built, and stops the other stream's build: nothing waits forever.
func TestAFailedBuildIsTheWaitersErrorAndStopsTheRest(t *testing.T) {
	broken := errors.New("building kueue: exit status 1")
	f := &fakeBuilds{release: map[string]chan struct{}{"kube-apiserver": make(chan struct{})}, fail: map[string]error{"kueue": broken}}
	bs := startBuilds(t.Context(), [][]string{{"etcd", "kube-apiserver"}, {"kwok", "kueue"}}, f.build)
	defer bs.end()
	done := make(chan error, 1)
	go func() { done <- bs.waitFor(map[string]string{}, "kube-apiserver") }()
	select {
	case err := <-done:
		if !errors.Is(err, broken) {
			t.Errorf("waiting for kube-apiserver: %v, want kueue's build error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiting for kube-apiserver did not end when kueue's build failed")
	}
}

// A MultiKueue manager runs no pods: no scheduler, JobSet or Trainer
// controller is built for it, and nothing waits for one.
func TestAManagerBuildsOnlyWhatItRuns(t *testing.T) {
	b := &bringUp{o: Options{Settings: Settings{Integration: IntegrationOurs, MultiKueue: MultiKueueManager, TrainerVersion: "v2.1.0"}}}
	var built []string
	for _, s := range b.buildStreams() {
		built = append(built, s...)
	}
	for _, group := range launchers() {
		for _, name := range needs(group, b.o) {
			if !slices.Contains(built, name) {
				t.Errorf("the manager runs %s but does not build it", name)
			}
		}
	}
	if slices.Contains(built, "kube-scheduler") {
		t.Errorf("the manager builds kube-scheduler (streams %v), which it does not run", b.buildStreams())
	}
}

// A group's components start in the order they are built: Kueue, built
// early in its stream, does not wait for kube-controller-manager, built
// last in the other.
func TestAGroupStartsEachComponentWhenItIsBuilt(t *testing.T) {
	f := &fakeBuilds{release: map[string]chan struct{}{"kube-controller-manager": make(chan struct{})}}
	bs := startBuilds(t.Context(), [][]string{{"kube-controller-manager"}, {"kueue"}}, f.build)
	defer bs.end()
	bins := map[string]string{}
	first, err := bs.next(bins, []string{"kube-controller-manager", "kueue"})
	if err != nil || first != "kueue" {
		t.Fatalf("next = %q, %v; want kueue, built while kube-controller-manager still builds", first, err)
	}
	close(f.release["kube-controller-manager"])
	second, err := bs.next(bins, []string{"kube-controller-manager"})
	if err != nil || second != "kube-controller-manager" {
		t.Fatalf("next = %q, %v; want kube-controller-manager", second, err)
	}
	if diff := cmp.Diff(map[string]string{"kueue": "/bin/kueue", "kube-controller-manager": "/bin/kube-controller-manager"}, bins); diff != "" {
		t.Errorf("binaries handed over (-want +got):\n%s", diff)
	}
}

// Each build is told how many streams build beside it, its own included,
// so its estimate counts them: two builds started at one instant do not
// see each other's processes. Once the other stream has ended, one.
func TestEachBuildIsToldHowManyBuildBesideIt(t *testing.T) {
	f := &fakeBuilds{release: map[string]chan struct{}{"kube-apiserver": make(chan struct{}), "kwok": make(chan struct{})}, sideBySide: map[string]int{}}
	bs := startBuilds(t.Context(), [][]string{{"kube-apiserver", "kube-controller-manager"}, {"kwok"}}, f.build)
	defer bs.end()
	for started := false; !started; time.Sleep(10 * time.Millisecond) {
		f.mu.Lock()
		started = len(f.sideBySide) == 2
		f.mu.Unlock()
	}
	close(f.release["kwok"])
	if err := bs.waitFor(map[string]string{}, "kwok"); err != nil {
		t.Fatal(err)
	}
	// kwok's stream ends the moment kwok is handed over.
	time.Sleep(100 * time.Millisecond)
	close(f.release["kube-apiserver"])
	if err := bs.waitFor(map[string]string{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"kube-apiserver": 2, "kwok": 2, "kube-controller-manager": 1}
	if diff := cmp.Diff(want, f.sideBySide); diff != "" {
		t.Errorf("builds side by side, as each build was told (-want +got):\n%s", diff)
	}
}
