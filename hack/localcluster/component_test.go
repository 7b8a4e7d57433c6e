package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A cached binary is found while another process holds the machine's build
// lock (make test's background build): clusters starting in parallel test
// packages must not wait out someone else's build.
func TestACachedComponentIsFoundWhileTheBuildLockIsHeld(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cache, tmp := t.TempDir(), t.TempDir()

	// Where hack/build-tool.sh caches etcd, as the script says.
	where := exec.Command(filepath.Join(root, "hack/component.sh"), "etcd")
	where.Env = append(os.Environ(), "TRAINJOB_KUEUE_CACHE="+cache, "BUILD_TOOL_WHERE=1")
	w, err := where.Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := strings.TrimSpace(string(w))
	if !strings.HasPrefix(bin, cache) {
		t.Fatalf("BUILD_TOOL_WHERE=1 hack/component.sh etcd = %q, want a path under %s", bin, cache)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	lock, err := os.Create(filepath.Join(tmp, fmt.Sprintf("trainjob-kueue-components-%d-etcd.lock", os.Getuid())))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack/component.sh"), "etcd")
	cmd.Env = append(os.Environ(), "TRAINJOB_KUEUE_CACHE="+cache, "TMPDIR="+tmp)
	// A waiting flock keeps the output open after the script is killed.
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatal("hack/component.sh waited for the build lock to hand out a cached binary")
	}
	if err != nil {
		t.Fatalf("hack/component.sh etcd: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != bin {
		t.Errorf("hack/component.sh etcd = %q, want the cached %q", got, bin)
	}
}

// A build's progress ticker dies with the build: a sleep left behind would
// hold the caller's stdout pipe open, and each component of a cold cluster
// start waited out up to 30 s of it after its build had ended.
func TestABuildHandsOverItsBinaryAsSoonAsItIsBuilt(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for _, f := range []struct{ path, body string }{
		{"hack/tools/hello/go.mod", "module example.com/hello\n\ngo 1.25\n"},
		{"hack/tools/hello/go.sum", ""},
		{"hack/tools/hello/main.go", "package main\n\nfunc main() {}\n"},
	} {
		p := filepath.Join(repo, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile(filepath.Join(root, "hack/build-tool.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "hack/build-tool.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	// Well under the ticker's 30 s, well over a build of an empty main.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "hack/build-tool.sh"), "hello", ".", "hello")
	cmd.Env = append(os.Environ(), "TRAINJOB_KUEUE_CACHE="+t.TempDir())
	cmd.WaitDelay = time.Second
	out, err := cmd.Output() // a pipe, as localcluster's build reads it
	if ctx.Err() != nil || errors.Is(err, exec.ErrWaitDelay) {
		t.Fatal("hack/build-tool.sh kept its stdout open after the build: its progress ticker outlived it")
	}
	if err != nil {
		t.Fatal(err)
	}
	if bin := strings.TrimSpace(string(out)); filepath.Base(bin) != "hello" {
		t.Errorf("hack/build-tool.sh printed %q, want the binary's path", bin)
	}
}

// The cluster builds every component hack/component.sh knows, each once.
func TestBuildStreamsHoldEveryComponentOnce(t *testing.T) {
	out, err := exec.Command("../../hack/component.sh", "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	slices.Sort(want)
	b := &bringUp{o: Options{Settings: Settings{Integration: IntegrationOurs}}}
	var got []string
	for _, s := range b.buildStreams() {
		got = append(got, s...)
	}
	slices.Sort(got)
	if diff := cmp.Diff(append(want, "trainjob-kueue"), got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("build streams (-component.sh +streams):\n%s", diff)
	}
}

// The main module (TOOL ".") is built from the working tree into its bin/,
// every time, never into the machine's binary cache: a cached binary would
// run code the tree no longer has.
func TestTheMainModuleIsBuiltFromTheWorkingTree(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	write := func(path, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile(filepath.Join(root, "hack/build-tool.sh"))
	if err != nil {
		t.Fatal(err)
	}
	write("hack/build-tool.sh", string(script), 0o755)
	write("go.mod", "module example.com/main\n\ngo 1.25\n", 0o644)
	cache := t.TempDir()
	for _, word := range []string{"first", "second"} {
		write("hello/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Print(\""+word+"\") }\n", 0o644)
		cmd := exec.Command(filepath.Join(repo, "hack/build-tool.sh"), ".", "./hello", "hello")
		cmd.Env = append(os.Environ(), "TRAINJOB_KUEUE_CACHE="+cache)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		bin := strings.TrimSpace(string(out))
		if bin != filepath.Join(repo, "bin", "hello") {
			t.Fatalf("hack/build-tool.sh . printed %q, want %s", bin, filepath.Join(repo, "bin", "hello"))
		}
		said, err := exec.Command(bin).Output()
		if err != nil || string(said) != word {
			t.Errorf("the binary built after the tree said %q says %q (%v)", word, said, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(cache, "bin")); len(entries) > 0 {
		t.Errorf("the main module's binary went to the binary cache: %v", entries)
	}
}
