package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func oursRun(n int, workloadP99, unsuspendP99, requests, cpuSeconds float64) *Summary {
	return &Summary{N: n, Setups: map[string]*Setup{setupOurs: {
		CreatedToWorkloadMS:     &Percentiles{P99: workloadP99},
		AdmittedToUnsuspendedMS: &Percentiles{P99: unsuspendP99},
		RequestsPerJob:          ref(requests),
		CPUSeconds:              ref(cpuSeconds),
		DryRunPerJob:            ref(0.0),
	}}}
}

// The baseline is each figure's median over the runs, its spread, and a
// factor of 1.5 times the spread; fewer than five runs or runs of
// different N make none.
func TestMakeBaselineTakesMediansAndFactorsFromTheSpread(t *testing.T) {
	var runs []*Summary
	for _, p99 := range []float64{400, 500, 600, 450, 800} {
		runs = append(runs, oursRun(60, p99, 100, 6, 2.4))
	}
	b, err := makeBaseline(8, runs)
	if err != nil {
		t.Fatal(err)
	}
	want := BaselineFigure{Value: 500, Spread: 2, Factor: 3, Slack: 250}
	if diff := cmp.Diff(want, b.Figures["created_to_workload_p99_ms"]); diff != "" {
		t.Errorf("created_to_workload_p99_ms (-want +got):\n%s", diff)
	}
	// No spread at all: the factor is still 1.5.
	if got := b.Figures["cpu_ms_per_job"]; got.Value != 40 || got.Factor != 1.5 {
		t.Errorf("cpu_ms_per_job = %+v, want value 40 (2.4 s over 60 jobs), factor 1.5", got)
	}
	if _, err := makeBaseline(8, runs[:4]); err == nil {
		t.Error("a baseline of 4 runs was made")
	}
	runs[4] = oursRun(300, 800, 100, 6, 2.4)
	if _, err := makeBaseline(8, runs); err == nil {
		t.Error("a baseline of runs at two Ns was made")
	}
}

// A run is held to each figure's bound: within it, nothing; beyond it,
// the figure named with its value and bound; a dry run is always one too
// many; a stalled or different-N run is an error, not a pass.
func TestRegressionsNameEachFigureBeyondItsBound(t *testing.T) {
	b := &Baseline{N: 60, Figures: map[string]BaselineFigure{
		"created_to_workload_p99_ms":     {Value: 500, Factor: 2, Slack: 250},
		"admitted_to_unsuspended_p99_ms": {Value: 50, Factor: 2, Slack: 250},
		"requests_per_job":               {Value: 6, Factor: 1.5, Slack: 0.5},
		"cpu_ms_per_job":                 {Value: 40, Factor: 1.5, Slack: 5},
		"dry_run_per_job":                {Value: 0, Factor: 1.5},
	}}
	cases := map[string]struct {
		run  *Summary
		want []string
	}{
		"within every bound":      {run: oursRun(60, 999, 299, 9, 3.6)},
		"the first step slowed":   {run: oursRun(60, 1001, 100, 6, 2.4), want: []string{"created_to_workload_p99_ms = 1001.00, over its bound 1000.00"}},
		"a small latency's slack": {run: oursRun(60, 500, 301, 6, 2.4), want: []string{"admitted_to_unsuspended_p99_ms = 301.00, over its bound 300.00"}},
		"more requests, more CPU": {run: oursRun(60, 500, 100, 9.1, 3.7), want: []string{"cpu_ms_per_job", "requests_per_job = 9.10"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := regressions(b, tc.run)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("regressions %q, want %d: %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("regression %d = %q, want it to start %q", i, got[i], w)
				}
			}
		})
	}
	dry := oursRun(60, 500, 100, 6, 2.4)
	dry.Setups[setupOurs].DryRunPerJob = ref(0.02)
	if got, _ := regressions(b, dry); len(got) != 1 || !strings.HasPrefix(got[0], "dry_run_per_job") {
		t.Errorf("a dry run: regressions %q, want dry_run_per_job", got)
	}
	stalled := oursRun(60, 500, 100, 6, 2.4)
	stalled.Setups[setupOurs].Unfinished = map[string]int{"queued": 3}
	if _, err := regressions(b, stalled); err == nil {
		t.Error("a stalled run passed")
	}
	if _, err := regressions(b, oursRun(300, 500, 100, 6, 2.4)); err == nil {
		t.Error("a run at another N was compared")
	}
}

// The baseline written from run directories is the one the check reads,
// and the check fails naming the figure.
func TestABaselineWrittenFromRunsChecksARun(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	for i, p99 := range []float64{400, 500, 600, 450, 550} {
		d := filepath.Join(dir, "run"+string(rune('a'+i)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeSummary(filepath.Join(d, "summary.json"), oursRun(60, p99, 100, 6, 2.4)); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	path := filepath.Join(dir, "baseline.json")
	if err := writeBaselineFrom(path, 8, dirs); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := checkBaseline(path, oursRun(60, 520, 100, 6, 2.4), &out); err != nil {
		t.Fatalf("a run like the baseline's: %v\n%s", err, out.String())
	}
	err := checkBaseline(path, oursRun(60, 5000, 100, 6, 2.4), &out)
	if err == nil || !strings.Contains(err.Error(), "created_to_workload_p99_ms = 5000.00") {
		t.Errorf("a run 10× slower at its first step: %v", err)
	}
}
