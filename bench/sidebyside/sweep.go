package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SweepPoint is one N of the sweep: what grows with N, per set-up.
type SweepPoint struct {
	N      int                 `json:"n"`
	Setups map[string]*PerJob  `json:"setups"`
	Ratios map[string]*float64 `json:"ratios"`
}

// PerJob is a set-up's costs divided by the jobs it handled, and the tail
// latency of the start: flat lines are what linear growth looks like.
type PerJob struct {
	RequestsPerJob         *float64 `json:"requests_per_job"`
	CPUMillisPerJob        *float64 `json:"cpu_ms_per_job"`
	AdmittedToUnsuspendP99 *float64 `json:"admitted_to_unsuspended_p99_ms"`
	CreatedToRunningP99    *float64 `json:"created_to_running_p99_ms"`
	ThroughputJobsPerS     float64  `json:"throughput_jobs_per_s"`
	// Unfinished: the set-up stalled with jobs there; the figures above
	// are then left out (they would cover work it never finished).
	Unfinished map[string]int `json:"unfinished,omitempty"`
}

// parseSweep reads "500,1000,2000".
func parseSweep(s string) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-sweep %q: %q is not a positive job count", s, f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// sweep runs the whole side by side once per N (each in out/n<N>, with its
// own summary.json and latency.png), then writes out/sweep.json and
// out/sweep.png: requests and CPU per job and the p99 of admitted ->
// unsuspended against N, for the in-tree integration and ours.
func sweep(ctx context.Context, o options, ns []int) error {
	var points []SweepPoint
	for _, n := range ns {
		one := o
		one.N, one.Out = n, filepath.Join(o.Out, fmt.Sprintf("n%d", n))
		fmt.Fprintf(os.Stderr, ">> sweep: N = %d\n", n)
		s, err := runAll(ctx, one)
		if err != nil {
			return fmt.Errorf("N = %d: %w", n, err)
		}
		points = append(points, sweepPoint(s))
		// Written after every N: a sweep cut short keeps what it measured.
		if err := writeSweep(o.Out, points); err != nil {
			return err
		}
	}
	printSweep(os.Stdout, points)
	fmt.Printf("\n%s/sweep.json, %s/sweep.png\n", o.Out, o.Out)
	return nil
}

// replotSweep writes out/sweep.json and out/sweep.png from the
// summary.json of earlier runs (one directory each), ordered by N. Runs of
// one N are merged: a set-up a later directory holds replaces an earlier
// one's, and the ratios are those of the merged set-ups (so ours can be
// measured again after a change of ours without running Kueue's in-tree
// integration, which did not change, again).
func replotSweep(out string, dirs []string) error {
	byN := map[int]*Summary{}
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			return err
		}
		s := &Summary{}
		if err := json.Unmarshal(data, s); err != nil {
			return fmt.Errorf("%s/summary.json: %w", dir, err)
		}
		m, ok := byN[s.N]
		if !ok {
			byN[s.N] = s
			continue
		}
		maps.Copy(m.Setups, s.Setups)
		m.Ratios = map[string]*float64{}
		o, t := m.Setups[setupOurs], m.Setups[setupInTree]
		if o != nil && t != nil && unfinishedCount(o.Unfinished) == 0 && unfinishedCount(t.Unfinished) == 0 {
			m.Ratios = ratios(o, t)
		}
	}
	var points []SweepPoint
	for _, s := range byN {
		points = append(points, sweepPoint(s))
	}
	slices.SortFunc(points, func(a, b SweepPoint) int { return a.N - b.N })
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeSweep(out, points); err != nil {
		return err
	}
	printSweep(os.Stdout, points)
	return nil
}

func sweepPoint(s *Summary) SweepPoint {
	p := SweepPoint{N: s.N, Setups: map[string]*PerJob{}, Ratios: map[string]*float64{}}
	for _, name := range []string{setupInTree, setupOurs} {
		st := s.Setups[name]
		if st == nil {
			continue
		}
		if unfinishedCount(st.Unfinished) > 0 {
			p.Setups[name] = &PerJob{Unfinished: st.Unfinished}
			continue
		}
		pj := &PerJob{RequestsPerJob: st.RequestsPerJob, ThroughputJobsPerS: st.ThroughputJobsPerS}
		if st.CPUSeconds != nil {
			pj.CPUMillisPerJob = ref(*st.CPUSeconds * 1000 / float64(s.N))
		}
		if st.AdmittedToUnsuspendedMS != nil {
			pj.AdmittedToUnsuspendP99 = ref(st.AdmittedToUnsuspendedMS.P99)
		}
		if st.CreatedToRunningMS != nil {
			pj.CreatedToRunningP99 = ref(st.CreatedToRunningMS.P99)
		}
		p.Setups[name] = pj
	}
	for _, k := range []string{"requests_per_job", "cpu_seconds", "unsuspend_p99"} {
		p.Ratios[k] = s.Ratios[k]
	}
	return p
}

func writeSweep(dir string, points []SweepPoint) error {
	data, err := json.MarshalIndent(points, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sweep.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return plotSweep(filepath.Join(dir, "sweep.png"), points)
}

func printSweep(w io.Writer, points []SweepPoint) {
	num := func(p *float64, format string) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf(format, *p)
	}
	fmt.Fprintln(w, "\n| N | requests/job intree | ours | ratio | CPU ms/job intree | ours | ratio | admitted → unsuspended p99 ms intree | ours |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, p := range points {
		it, o := p.Setups[setupInTree], p.Setups[setupOurs]
		if it == nil {
			it = &PerJob{}
		}
		if o == nil {
			o = &PerJob{}
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.N,
			num(it.RequestsPerJob, "%.2f"), num(o.RequestsPerJob, "%.2f"), num(p.Ratios["requests_per_job"], "%.3f"),
			num(it.CPUMillisPerJob, "%.1f"), num(o.CPUMillisPerJob, "%.1f"), num(p.Ratios["cpu_seconds"], "%.3f"),
			num(it.AdmittedToUnsuspendP99, "%.0f"), num(o.AdmittedToUnsuspendP99, "%.0f"))
	}
	for _, p := range points {
		for _, name := range []string{setupInTree, setupOurs} {
			if pj := p.Setups[name]; pj != nil && len(pj.Unfinished) > 0 {
				fmt.Fprintf(w, "\nN = %d, %s STALLED: %s\n", p.N, name, describeStates(pj.Unfinished))
			}
		}
	}
}
