package main

import (
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSweep(t *testing.T) {
	for in, want := range map[string][]int{"500,1000,2000": {500, 1000, 2000}, " 24 ": {24}} {
		got, err := parseSweep(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
	for _, bad := range []string{"", "0", "500,x", "-5"} {
		if _, err := parseSweep(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// A sweep point is per job: CPU seconds over N jobs in milliseconds each.
func TestSweepPointIsPerJob(t *testing.T) {
	s := &Summary{N: 500, Setups: map[string]*Setup{
		setupFloor:  {ThroughputJobsPerS: 18},
		setupInTree: {RequestsPerJob: ref(16.0), CPUSeconds: ref(20.0), AdmittedToUnsuspendedMS: &Percentiles{P99: 900}, ThroughputJobsPerS: 2},
		setupOurs:   {RequestsPerJob: ref(6.0), CPUSeconds: ref(10.0), AdmittedToUnsuspendedMS: &Percentiles{P99: 90}, ThroughputJobsPerS: 2},
	}, Ratios: map[string]*float64{"requests_per_job": ref(0.375), "cpu_seconds": ref(0.5), "unsuspend_p99": ref(0.1), "peak_rss": ref(3.0)}}
	got := sweepPoint(s)
	want := SweepPoint{N: 500,
		Setups: map[string]*PerJob{
			setupInTree: {RequestsPerJob: ref(16.0), CPUMillisPerJob: ref(40.0), AdmittedToUnsuspendP99: ref(900.0), ThroughputJobsPerS: 2},
			setupOurs:   {RequestsPerJob: ref(6.0), CPUMillisPerJob: ref(20.0), AdmittedToUnsuspendP99: ref(90.0), ThroughputJobsPerS: 2},
		},
		Ratios: map[string]*float64{"requests_per_job": ref(0.375), "cpu_seconds": ref(0.5), "unsuspend_p99": ref(0.1)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWriteSweepWritesAPlotAndTheFigures(t *testing.T) {
	dir := t.TempDir()
	points := []SweepPoint{
		{N: 500, Setups: map[string]*PerJob{setupOurs: {RequestsPerJob: ref(6.0), CPUMillisPerJob: ref(20.0)}}},
		{N: 1000, Setups: map[string]*PerJob{setupOurs: {RequestsPerJob: ref(6.1)}, setupInTree: {RequestsPerJob: ref(15.0)}}},
	}
	if err := writeSweep(dir, points); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "sweep.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("sweep.png: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep.json")); err != nil {
		t.Fatal(err)
	}
}

// Earlier runs' summaries are plotted as a sweep, ordered by N.
func TestReplotSweepOrdersEarlierRunsByN(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{2000, 500} {
		sub := filepath.Join(dir, fmt.Sprintf("n%d", n))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		s := &Summary{N: n, Setups: map[string]*Setup{setupOurs: {RequestsPerJob: ref(7.0), CPUSeconds: ref(float64(n) / 100)}}}
		if err := writeSummary(filepath.Join(sub, "summary.json"), s); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	if err := replotSweep(out, []string{filepath.Join(dir, "n2000"), filepath.Join(dir, "n500")}); err != nil {
		t.Fatal(err)
	}
	points := readSweep(t, out)
	var ns []int
	for _, p := range points {
		ns = append(ns, p.N)
		if got := *p.Setups[setupOurs].CPUMillisPerJob; got != 10 {
			t.Errorf("N = %d: %v CPU ms per job, want 10", p.N, got)
		}
	}
	if diff := cmp.Diff([]int{500, 2000}, ns); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
}

// Runs of one N merge: ours measured again replaces ours, the in-tree
// integration's figures stay, and the ratios are the merged set-ups'.
func TestReplotSweepMergesRunsOfOneN(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, s *Summary) string {
		sub := filepath.Join(dir, name)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeSummary(filepath.Join(sub, "summary.json"), s); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	before := write("before", &Summary{N: 500, Setups: map[string]*Setup{
		setupInTree: {RequestsPerJob: ref(16.0), CPUSeconds: ref(40.0)},
		setupOurs:   {RequestsPerJob: ref(7.0), CPUSeconds: ref(20.0)},
	}, Ratios: map[string]*float64{"requests_per_job": ref(7.0 / 16), "cpu_seconds": ref(0.5)}})
	again := write("again", &Summary{N: 500, Setups: map[string]*Setup{
		setupOurs: {RequestsPerJob: ref(8.0), CPUSeconds: ref(10.0)},
	}, Ratios: map[string]*float64{}})
	out := filepath.Join(dir, "out")
	if err := replotSweep(out, []string{before, again}); err != nil {
		t.Fatal(err)
	}
	points := readSweep(t, out)
	if len(points) != 1 {
		t.Fatalf("%d points, want 1", len(points))
	}
	p := points[0]
	got := map[string]float64{
		"ours requests": *p.Setups[setupOurs].RequestsPerJob, "intree requests": *p.Setups[setupInTree].RequestsPerJob,
		"requests ratio": *p.Ratios["requests_per_job"], "cpu ratio": *p.Ratios["cpu_seconds"],
	}
	want := map[string]float64{"ours requests": 8, "intree requests": 16, "requests ratio": 0.5, "cpu ratio": 0.25}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
}

func readSweep(t *testing.T, dir string) []SweepPoint {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var points []SweepPoint
	if err := json.Unmarshal(data, &points); err != nil {
		t.Fatal(err)
	}
	return points
}
