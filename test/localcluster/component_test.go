package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

	lock, err := os.Create(filepath.Join(tmp, fmt.Sprintf("trainjob-kueue-components-%d.lock", os.Getuid())))
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
