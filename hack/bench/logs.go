package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/trainjob-kueue/trainjob-kueue/test/localcluster"
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
