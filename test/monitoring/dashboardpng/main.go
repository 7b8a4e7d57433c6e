// Command dashboardpng draws the chart's Grafana dashboard as a picture,
// from real scrapes of the manager's metrics (make dashboard-picture records
// them while the demo runs). Each panel's queries are evaluated by
// Prometheus' own engine over the scrapes, as Grafana would ask Prometheus,
// and drawn with gonum/plot: the picture shows what an admin's Grafana
// would, without a Grafana.
//
//	go run ./dashboardpng -scrapes DIR -o docs/dashboard.png
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/test/monitoring"
)

func main() {
	scrapes := flag.String("scrapes", "", "a directory of <unix ms>.prom scrapes (hack/demo -record-metrics)")
	dashboard := flag.String("dashboard", monitoring.DashboardFile, "the Grafana dashboard's JSON")
	out := flag.String("o", "dashboard.png", "the picture to write")
	step := flag.Duration("step", 10*time.Second, "the queries' resolution")
	flag.Parse()
	if err := run(context.Background(), *scrapes, *dashboard, *out, *step); err != nil {
		fmt.Fprintf(os.Stderr, "dashboardpng: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scrapes, dashboardFile, out string, step time.Duration) error {
	if scrapes == "" {
		return fmt.Errorf("-scrapes is required: a directory hack/demo -record-metrics wrote")
	}
	d, err := monitoring.ReadDashboard(dashboardFile)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "dashboardpng-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	s, err := openStore(tmp)
	if err != nil {
		return err
	}
	defer s.Close()
	span, err := s.load(scrapes)
	if err != nil {
		return err
	}
	panels, err := evaluate(ctx, s, d, span, step)
	if err != nil {
		return err
	}
	// Written aside and renamed: a failed drawing leaves the last picture.
	f, err := os.CreateTemp(filepath.Dir(out), ".dashboard-*.png")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := drawPanels(f, d.Title, panels, span); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), out)
}
