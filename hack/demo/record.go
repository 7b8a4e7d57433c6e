package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// recorder keeps the manager's metrics as the demo runs: one scrape every
// interval, in dir as <unix milliseconds>.prom, the text Prometheus would
// have scraped. make dashboard-picture draws the chart's Grafana dashboard
// from them (test/monitoring/dashboardpng).
type recorder struct {
	c        *localcluster.Cluster
	dir      string
	interval time.Duration
	token    string
}

func newRecorder(ctx context.Context, c *localcluster.Cluster, dir string, interval time.Duration) (*recorder, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	token, err := c.MetricsToken(ctx)
	if err != nil {
		return nil, err
	}
	return &recorder{c: c, dir: dir, interval: interval, token: token}, nil
}

// run scrapes until ctx ends. A failed scrape is a gap in the picture, not a
// failed demo: it is said once per failure and the next one is tried.
func (r *recorder) run(ctx context.Context) {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		if err := r.scrape(); err != nil {
			fmt.Fprintf(os.Stderr, "demo: recording metrics: %v\n", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *recorder) scrape() error {
	now := time.Now()
	body, err := r.c.Scrape(fmt.Sprintf("https://127.0.0.1:%d/metrics", r.c.Port("ours-metrics")), r.token)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.dir, fmt.Sprintf("%d.prom", now.UnixMilli())), body, 0o644)
}
