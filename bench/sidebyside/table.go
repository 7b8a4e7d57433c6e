package main

import (
	"fmt"
	"io"
	"strings"
)

func printTable(w io.Writer, s *Summary) {
	num := func(p *float64, format string) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf(format, *p)
	}
	pct := func(p *Percentiles) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf("%.0f / %.0f / %.0f", p.P50, p.P90, p.P99)
	}
	get := func(name string) *Setup {
		if st := s.Setups[name]; st != nil {
			return st
		}
		return &Setup{}
	}
	f, it, o := get(setupFloor), get(setupInTree), get(setupOurs)
	fmt.Fprintf(w, "\nN = %d TrainJobs per set-up, %d round(s)\n\n", s.N, s.Rounds)
	fmt.Fprintln(w, "| | floor | intree | ours | ours ÷ intree |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	fmt.Fprintf(w, "| API requests per job | — | %s | %s | %s |\n", num(it.RequestsPerJob, "%.2f"), num(o.RequestsPerJob, "%.2f"), num(s.Ratios["requests_per_job"], "%.3f"))
	fmt.Fprintf(w, "| dry-run requests per job | — | %s | %s | |\n", num(it.DryRunPerJob, "%.2f"), num(o.DryRunPerJob, "%.2f"))
	fmt.Fprintf(w, "| created → Workload, ms p50/p90/p99 | — | %s | %s | |\n", pct(it.CreatedToWorkloadMS), pct(o.CreatedToWorkloadMS))
	fmt.Fprintf(w, "| admitted → unsuspended, ms p50/p90/p99 | — | %s | %s | %s (p99) |\n", pct(it.AdmittedToUnsuspendedMS), pct(o.AdmittedToUnsuspendedMS), num(s.Ratios["unsuspend_p99"], "%.3f"))
	fmt.Fprintf(w, "| ↳ Kueue's admission write → the start write sent, ms | — | %s | %s | |\n", pct(it.AdmissionToStartWriteMS), pct(o.AdmissionToStartWriteMS))
	fmt.Fprintf(w, "| ↳ the start write at the API server (webhooks included), ms | — | %s | %s | |\n", pct(it.StartWriteMS), pct(o.StartWriteMS))
	fmt.Fprintf(w, "| created → all pods running, ms p50/p90/p99 | — | %s | %s | %s (p99) |\n", pct(it.CreatedToRunningMS), pct(o.CreatedToRunningMS), num(s.Ratios["created_to_running_p99"], "%.3f"))
	if f.AllReservedS != nil || o.AllReservedS != nil || it.AllReservedS != nil {
		fmt.Fprintf(w, "| created → QuotaReserved, ms p50/p90/p99 | %s | %s | %s | |\n", pct(f.CreatedToReservedMS), pct(it.CreatedToReservedMS), pct(o.CreatedToReservedMS))
		fmt.Fprintf(w, "| all reserved, s (÷ floor) | %s | %s (%s) | %s (%s) | |\n", num(f.AllReservedS, "%.0f"),
			num(it.AllReservedS, "%.0f"), num(s.Ratios["all_reserved_vs_floor_"+setupInTree], "%.3f"), num(o.AllReservedS, "%.0f"), num(s.Ratios["all_reserved_vs_floor_"+setupOurs], "%.3f"))
		fmt.Fprintf(w, "| the stream, first create to last, s | %s | %s | %s | |\n", num(f.StreamS, "%.0f"), num(it.StreamS, "%.0f"), num(o.StreamS, "%.0f"))
	}
	fmt.Fprintf(w, "| admissions per second | %.1f | %.1f | %.1f | %s (÷ floor %s) |\n", f.ThroughputJobsPerS, it.ThroughputJobsPerS, o.ThroughputJobsPerS, num(s.Ratios["throughput_vs_intree"], "%.3f"), num(s.Ratios["throughput_vs_floor"], "%.3f"))
	fmt.Fprintf(w, "| integration CPU seconds | — | %s | %s | %s |\n", num(it.CPUSeconds, "%.1f"), num(o.CPUSeconds, "%.1f"), num(s.Ratios["cpu_seconds"], "%.3f"))
	fmt.Fprintf(w, "| integration peak RSS, MiB | — | %s | %s | %s |\n", num(it.PeakRSSMiB, "%.0f"), num(o.PeakRSSMiB, "%.0f"), num(s.Ratios["peak_rss"], "%.3f"))
	fmt.Fprintf(w, "\nrequests by verb — intree: %v; ours: %v\n", it.RequestsByVerb, o.RequestsByVerb)
	fmt.Fprintf(w, "Workload status writes by field manager — Kueue in intree: %v; ours: %v\n", it.StatusWritesByOwner, o.StatusWritesByOwner)
	if s.Rounds > 1 {
		fmt.Fprintf(w, "CPU seconds by round — intree: %s; ours: %s\n", roundsOf(it.ByRound), roundsOf(o.ByRound))
	}
	for _, name := range []string{setupFloor, setupInTree, setupOurs} {
		if st := s.Setups[name]; st != nil && len(st.Unfinished) > 0 {
			fmt.Fprintf(w, "\n%s STALLED: %s (its figures include work on jobs it never finished; no ratios)\n", name, describeStates(st.Unfinished))
		}
	}
}

func roundsOf(r *Rounds) string {
	if r == nil {
		return "—"
	}
	parts := make([]string, len(r.CPUSeconds))
	for i, c := range r.CPUSeconds {
		parts[i] = fmt.Sprintf("%.1f", c)
	}
	return strings.Join(parts, ", ")
}
