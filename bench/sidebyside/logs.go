package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// logTail is how much of each component's log a stopped set-up keeps: the
// end says why it stopped; a whole Kueue log at N = 2,000 is far larger.
const logTail = 4 << 20

// keepLogs copies the end of every component's log into dir before the
// set-up's cluster, and its logs with it, are torn down.
func keepLogs(c *localcluster.Cluster, dir string) error {
	return copyTails(filepath.Join(c.Dir, "logs"), dir, logTail)
}

func copyTails(from, to string, tail int64) error {
	logs, err := filepath.Glob(filepath.Join(from, "*.log"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, path := range logs {
		if err := copyTail(path, filepath.Join(to, filepath.Base(path)), tail); err != nil {
			return fmt.Errorf("keeping %s: %w", filepath.Base(path), err)
		}
	}
	return nil
}

func copyTail(from, to string, tail int64) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	if info.Size() > tail {
		if _, err := in.Seek(info.Size()-tail, io.SeekStart); err != nil {
			return err
		}
	}
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// lastWordsTail is how much of an exited component's log is searched for
// why it exited: its last error is within the final lines.
const lastWordsTail = 256 << 10

// lastWords reads why a component exited from the end of its log: a Go
// panic or fatal error, else its last error-level line (controller-runtime's
// JSON or klog's text). Empty when the log says nothing of it.
func lastWords(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > lastWordsTail {
		if _, err := f.Seek(info.Size()-lastWordsTail, io.SeekStart); err != nil {
			return ""
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return ""
	}
	return lastError(strings.Split(string(data), "\n"))
}

func lastError(lines []string) string {
	// A panic's goroutine dump follows its message: find the message first.
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return clip(l)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if words := errorLine(strings.TrimSpace(lines[i])); words != "" {
			return clip(words)
		}
	}
	return ""
}

// errorLine is what an error-level log line says, or "" for any other line.
func errorLine(l string) string {
	if strings.HasPrefix(l, "{") {
		var e struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(l), &e) != nil {
			return ""
		}
		switch e.Level {
		case "error", "dpanic", "panic", "fatal":
			if e.Error != "" {
				return e.Msg + ": " + e.Error
			}
			return e.Msg
		}
		return ""
	}
	// klog: "E1126 06:09:00.620420   20839 file.go:461] message".
	if m := klogError.FindStringSubmatch(l); m != nil {
		return m[1]
	}
	return ""
}

var klogError = regexp.MustCompile(`^[EF]\d{4} [0-9:.]+\s+\d+ [^\]]+\] (.*)$`)

func clip(s string) string {
	const max = 160
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
