package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Baseline is what make bench-check holds trainjob-kueue to: its figures
// at a small N, from a committed file (bench/sidebyside/baseline.json), each
// with the factor it may grow by before the check fails. Like Kueue's
// scheduler performance tests' range specs, one bound per figure; the
// factors come from the spread of the runs the baseline was made from.
type Baseline struct {
	// N and Rate are the load the figures were measured at; a check runs
	// the same.
	N    int     `json:"n"`
	Rate float64 `json:"rate"`
	// Runs is how many runs the values are the medians of.
	Runs    int                       `json:"runs"`
	Figures map[string]BaselineFigure `json:"figures"`
}

// BaselineFigure is one figure's median over the baseline's runs, the
// spread seen (largest over smallest), and the bound a check allows:
// Value × Factor, and never less than Value + Slack (a latency of a few
// milliseconds moves by more than any factor of itself from run to run).
type BaselineFigure struct {
	Value  float64 `json:"value"`
	Spread float64 `json:"spread"`
	Factor float64 `json:"factor"`
	Slack  float64 `json:"slack"`
}

// Bound is the largest value a check accepts.
func (f BaselineFigure) Bound() float64 { return math.Max(f.Value*f.Factor, f.Value+f.Slack) }

// checkedFigures are the figures bench-check compares, from a run of the
// ours set-up: the first step's latency and the start's, the integration's
// cost per job, and no dry run ever. Lower is better for each.
func checkedFigures(s *Summary) (map[string]float64, error) {
	o := s.Setups[setupOurs]
	if o == nil || o.CreatedToWorkloadMS == nil || o.AdmittedToUnsuspendedMS == nil || o.RequestsPerJob == nil || o.CPUSeconds == nil || o.DryRunPerJob == nil {
		return nil, fmt.Errorf("the run has no complete measurement of trainjob-kueue (set-up %q)", setupOurs)
	}
	if n := unfinishedCount(o.Unfinished); n > 0 {
		return nil, fmt.Errorf("trainjob-kueue stalled with %d jobs unfinished: %s", n, describeStates(o.Unfinished))
	}
	return map[string]float64{
		"created_to_workload_p99_ms":     o.CreatedToWorkloadMS.P99,
		"admitted_to_unsuspended_p99_ms": o.AdmittedToUnsuspendedMS.P99,
		"requests_per_job":               *o.RequestsPerJob,
		"cpu_ms_per_job":                 *o.CPUSeconds * 1000 / float64(s.N),
		"dry_run_per_job":                *o.DryRunPerJob,
	}, nil
}

// slackOf a figure: what it may move by whatever its value (latencies by
// a scheduling quantum of the 2-core machine).
func slackOf(name string) float64 {
	switch name {
	case "created_to_workload_p99_ms", "admitted_to_unsuspended_p99_ms":
		return 250
	case "requests_per_job":
		return 0.5
	case "cpu_ms_per_job":
		return 5
	}
	return 0
}

// makeBaseline is the baseline of several runs' summaries: each figure's
// median, its spread, and a factor of 1.5 times that spread (at least
// 1.5): a run as far from the median as the runs themselves were, and half
// again, passes; a regression beyond that fails.
func makeBaseline(rate float64, runs []*Summary) (*Baseline, error) {
	if len(runs) < 5 {
		return nil, fmt.Errorf("a baseline takes at least 5 runs to measure the spread from, got %d", len(runs))
	}
	values := map[string][]float64{}
	for i, s := range runs {
		if s.N != runs[0].N {
			return nil, fmt.Errorf("run %d is of %d jobs, run 1 of %d: a baseline is of one N", i+1, s.N, runs[0].N)
		}
		fs, err := checkedFigures(s)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		for name, v := range fs {
			values[name] = append(values[name], v)
		}
	}
	b := &Baseline{N: runs[0].N, Rate: rate, Runs: len(runs), Figures: map[string]BaselineFigure{}}
	for name, vs := range values {
		slices.Sort(vs)
		spread := 1.0
		if vs[0] > 0 {
			spread = vs[len(vs)-1] / vs[0]
		}
		b.Figures[name] = BaselineFigure{
			Value:  vs[len(vs)/2],
			Spread: round2(spread),
			Factor: round2(math.Max(1.5, 1.5*spread)),
			Slack:  slackOf(name),
		}
	}
	return b, nil
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// regressions of a run against the baseline: one line per figure beyond
// its bound, naming the figure, the value, the bound and the baseline.
func regressions(b *Baseline, s *Summary) ([]string, error) {
	if s.N != b.N {
		return nil, fmt.Errorf("the run is of %d jobs, the baseline of %d: run bench-check as the baseline was made", s.N, b.N)
	}
	got, err := checkedFigures(s)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(b.Figures))
	for name := range b.Figures {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		f := b.Figures[name]
		v, ok := got[name]
		if !ok {
			return nil, fmt.Errorf("the baseline has figure %q, which this bench does not measure: refresh it", name)
		}
		if v > f.Bound() {
			out = append(out, fmt.Sprintf("%s = %.2f, over its bound %.2f (baseline %.2f × %.2f, or + %.2f)", name, v, f.Bound(), f.Value, f.Factor, f.Slack))
		}
	}
	return out, nil
}

func readBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b := &Baseline{}
	if err := json.Unmarshal(data, b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b.Figures) == 0 {
		return nil, fmt.Errorf("%s has no figures", path)
	}
	return b, nil
}

// writeBaselineFrom makes the baseline from the summary.json of each of
// dirs (earlier runs at one N) and writes it to path.
func writeBaselineFrom(path string, rate float64, dirs []string) error {
	var runs []*Summary
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(strings.TrimSpace(dir), "summary.json"))
		if err != nil {
			return err
		}
		s := &Summary{}
		if err := json.Unmarshal(data, s); err != nil {
			return fmt.Errorf("%s/summary.json: %w", dir, err)
		}
		runs = append(runs, s)
	}
	b, err := makeBaseline(rate, runs)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// checkBaseline prints how the run compares with the baseline at path and
// fails naming each figure beyond its bound.
func checkBaseline(path string, s *Summary, w io.Writer) error {
	b, err := readBaseline(path)
	if err != nil {
		return err
	}
	got, err := checkedFigures(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n| figure (%d jobs) | this run | baseline | bound |\n|---|---|---|---|\n", b.N)
	names := make([]string, 0, len(b.Figures))
	for name := range b.Figures {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := b.Figures[name]
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f |\n", name, got[name], f.Value, f.Bound())
	}
	bad, err := regressions(b, s)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("regressed against %s:\n  %s", path, strings.Join(bad, "\n  "))
	}
	fmt.Fprintf(w, "\nno regression against %s\n", path)
	return nil
}
