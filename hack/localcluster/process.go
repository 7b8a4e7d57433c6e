package localcluster

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startProcess runs a component in its own session, so it outlives the
// command that started the cluster, logging to logs/<name>.log and
// recording its pid in pids/<name>.pid.
func startProcess(dir, name string, env []string, bin string, args ...string) (int, error) {
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "pids"), 0o755); err != nil {
		return 0, err
	}
	logFile, err := os.OpenFile(filepath.Join(logs, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	// Reap it if it dies while we are still around; afterwards init does.
	go func() { _ = cmd.Wait() }()
	if err := os.WriteFile(filepath.Join(dir, "pids", name+".pid"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return pid, err
	}
	return pid, nil
}

func pidFiles(dir string) map[string]int {
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie is not running.
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(data))
	return len(fields) < 3 || fields[2] != "Z"
}

// stopAll sends SIGTERM to each process group, waits up to 15s, then kills.
func stopAll(pids map[string]int, progress io.Writer) {
	stopWithin(pids, progress, 15*time.Second)
}

// stopWithin is stopAll with the grace it gives SIGTERM before SIGKILL.
func stopWithin(pids map[string]int, progress io.Writer, grace time.Duration) {
	for name, pid := range pids {
		if alive(pid) {
			fmt.Fprintf(progress, "stopping %s (pid %d)\n", name, pid)
			_ = syscall.Kill(-pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !anyAlive(pids) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	// A SIGKILL is not a death: the process is gone only once its threads
	// have exited. A caller that starts the component again at once (a
	// restart whose graceful stop outlasted its 15 s) would otherwise find
	// it still running, or its ports still held.
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && anyAlive(pids) {
		time.Sleep(20 * time.Millisecond)
	}
}

func anyAlive(pids map[string]int) bool {
	for _, pid := range pids {
		if alive(pid) {
			return true
		}
	}
	return false
}
