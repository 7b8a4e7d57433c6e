package main

import (
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainjob-kueue/trainjob-kueue/test/monitoring"
)

// scrapeAt is a manager's scrape after n jobs were admitted and started.
func scrapeAt(n int) string {
	return fmt.Sprintf(`# HELP trainjob_kueue_trainjobs TrainJobs by state.
# TYPE trainjob_kueue_trainjobs gauge
trainjob_kueue_trainjobs{local_queue="gpu",namespace="ml",state="Queued"} %d
trainjob_kueue_trainjobs{local_queue="gpu",namespace="ml",state="Running"} %d
# HELP trainjob_kueue_admission_to_start_seconds Admission to unsuspend.
# TYPE trainjob_kueue_admission_to_start_seconds histogram
trainjob_kueue_admission_to_start_seconds_bucket{le="0.1"} %d
trainjob_kueue_admission_to_start_seconds_bucket{le="1"} %d
trainjob_kueue_admission_to_start_seconds_bucket{le="+Inf"} %d
trainjob_kueue_admission_to_start_seconds_sum %g
trainjob_kueue_admission_to_start_seconds_count %d
# HELP rest_client_requests_total Requests.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="x",method="PATCH"} %d
`, 10-n, n, n, n, n, 0.05*float64(n), n, 3*n)
}

func writeScrapes(t *testing.T, start time.Time, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * 10 * time.Second)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.prom", at.UnixMilli())), []byte(scrapeAt(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The chart's own dashboard, evaluated by Prometheus' engine over scrapes:
// a panel shows the series its query selects, named by its legend format.
func TestPanelsShowTheScrapedSeries(t *testing.T) {
	start := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	dir := writeScrapes(t, start, 7)
	s, err := openStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp, err := s.load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (span{start, start.Add(60 * time.Second)}); !sp.start.Equal(want.start) || !sp.end.Equal(want.end) {
		t.Fatalf("span = %v..%v, want %v..%v", sp.start, sp.end, want.start, want.end)
	}
	d, err := monitoring.ReadDashboard("../" + monitoring.DashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	panels, err := evaluate(context.Background(), s, d, sp, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	legends := map[string][]string{}
	last := map[string]float64{}
	for _, p := range panels {
		for _, c := range p.curves {
			legends[p.title] = append(legends[p.title], c.legend)
			last[p.title+"/"+c.legend] = c.points[len(c.points)-1].value
		}
	}
	if diff := cmp.Diff([]string{"ml/gpu Queued", "ml/gpu Running"}, legends["TrainJobs by state and queue"]); diff != "" {
		t.Errorf("TrainJobs by state and queue (-want +got):\n%s", diff)
	}
	if got := last["TrainJobs by state and queue/ml/gpu Running"]; got != 6 {
		t.Errorf("running jobs at the last scrape = %v, want 6", got)
	}
	if diff := cmp.Diff([]string{"PATCH"}, legends["API requests by verb"]); diff != "" {
		t.Errorf("API requests by verb (-want +got):\n%s", diff)
	}
	// 18 PATCHes within the panel's 5-minute window, as Prometheus' rate()
	// counts them (a counter from zero is not extrapolated below it).
	if got := last["API requests by verb/PATCH"]; got < 0.059 || got > 0.061 {
		t.Errorf("PATCH rate = %v/s, want 18/300 s", got)
	}
	if len(legends["Admission → unsuspend latency"]) != 2 {
		t.Errorf("the latency panel shows %v, want p50 and p99", legends["Admission → unsuspend latency"])
	}
	if len(legends["Webhook refusals by field"]) != 0 {
		t.Errorf("a panel of metrics never scraped shows %v", legends["Webhook refusals by field"])
	}
}

func TestThePictureHasEveryPanel(t *testing.T) {
	dir := writeScrapes(t, time.Now().Add(-5*time.Minute), 4)
	out := filepath.Join(t.TempDir(), "dashboard.png")
	if err := run(context.Background(), dir, "../"+monitoring.DashboardFile, out, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := monitoring.ReadDashboard("../" + monitoring.DashboardFile)
	rows := (len(d.QueryPanels()) + columns - 1) / columns
	// 96 dpi: 16 inches wide, 3.2 per row of panels and half an inch of title.
	if b := img.Bounds(); b.Dx() != 16*96 || b.Dy() != int((float64(rows)*3.2+0.5)*96) {
		t.Errorf("picture is %dx%d, want %dx%d for %d rows", b.Dx(), b.Dy(), 16*96, int((float64(rows)*3.2+0.5)*96), rows)
	}
}

func TestRefusesTooFewScrapes(t *testing.T) {
	dir := writeScrapes(t, time.Now(), 1)
	err := run(context.Background(), dir, "../"+monitoring.DashboardFile, filepath.Join(t.TempDir(), "x.png"), time.Second)
	if err == nil || !strings.Contains(err.Error(), "needs two") {
		t.Errorf("run with one scrape = %v, want an error saying a rate needs two", err)
	}
}

func TestLegend(t *testing.T) {
	for format, want := range map[string]string{
		"{{namespace}}/{{local_queue}} {{state}}": "ml/gpu Queued",
		"p99":                "p99",
		"boost {{ action }}": "boost ",
	} {
		if got := legend(format, map[string]string{"namespace": "ml", "local_queue": "gpu", "state": "Queued"}); got != want {
			t.Errorf("legend(%q) = %q, want %q", format, got, want)
		}
	}
}
