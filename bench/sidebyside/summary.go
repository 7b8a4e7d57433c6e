package main

import (
	"encoding/json"
	"os"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
)

// Percentiles of a latency, in milliseconds.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// Setup is one set-up's measurements; nil where it does not apply.
type Setup struct {
	RequestsPerJob          *float64     `json:"requests_per_job"`
	DryRunPerJob            *float64     `json:"dry_run_per_job"`
	CreatedToWorkloadMS     *Percentiles `json:"created_to_workload_ms"`
	AdmittedToUnsuspendedMS *Percentiles `json:"admitted_to_unsuspended_ms"`
	CreatedToRunningMS      *Percentiles `json:"created_to_running_ms"`
	// AdmissionToStartWriteMS and StartWriteMS cut admitted → unsuspended
	// at the API server (startSplit): Kueue's admission write to the
	// integration's start write arriving, and that write's own time, its
	// admission webhooks included.
	AdmissionToStartWriteMS *Percentiles `json:"admission_to_start_write_ms,omitempty"`
	StartWriteMS            *Percentiles `json:"start_write_ms,omitempty"`
	// CreatedToReservedMS: created → the Workload's QuotaReserved, and
	// AllReservedS: the first create to the last reservation (a
	// harness-scale run, -hold; the floor's own Workload create is its
	// job's).
	CreatedToReservedMS *Percentiles `json:"created_to_reserved_ms,omitempty"`
	AllReservedS        *float64     `json:"all_reserved_s,omitempty"`
	// StreamS: the first create sent to the last (a harness-scale run):
	// (N-1) ÷ rate when the load kept the stream's pace, more when it did
	// not, and then AllReservedS measures the load, not the set-up.
	StreamS            *float64 `json:"stream_s,omitempty"`
	ThroughputJobsPerS float64  `json:"throughput_jobs_per_s"`
	CPUSeconds         *float64 `json:"cpu_seconds"`
	PeakRSSMiB         *float64 `json:"peak_rss_mib"`
	// ByRound: the per-job requests and CPU seconds of each round, of which
	// the figures above are the mean: how far rounds differ is the
	// measurement's noise.
	ByRound        *Rounds        `json:"by_round,omitempty"`
	RequestsByVerb map[string]int `json:"requests_by_verb,omitempty"`
	// StatusWritesByOwner: Workload status writes by field manager, what
	// each was for — ours: all of our process's; intree: all of Kueue's
	// process's in that set-up, its scheduler's included.
	StatusWritesByOwner map[string]int `json:"status_writes_by_owner,omitempty"`
	// Unfinished: where the jobs of a set-up that stalled stood (summed
	// over rounds); its per-job figures then cover work it never finished.
	Unfinished map[string]int `json:"unfinished,omitempty"`
}

// Rounds are a set-up's figures round by round.
type Rounds struct {
	RequestsPerJob []float64 `json:"requests_per_job"`
	CPUSeconds     []float64 `json:"cpu_seconds"`
}

// Summary is .bench/summary.json.
type Summary struct {
	N      int                 `json:"n"`
	Rounds int                 `json:"rounds"`
	Setups map[string]*Setup   `json:"setups"`
	Ratios map[string]*float64 `json:"ratios"`
}

// summarize pools latencies over rounds and averages the rest. The in-tree
// integration runs inside Kueue: its CPU and memory are Kueue's in the
// intree set-up minus Kueue's in the ours set-up of the same round (same
// load, same Kueue, only the TrainJob framework differs). Its requests are
// Kueue's on TrainJobs and Workloads, plus the Workload status writes Kueue
// makes beyond those it makes in the ours set-up (where the job
// framework's are trainjob-kueue's). Kueue's other requests depend on how
// long Workloads wait in the queue, which differs between the set-ups, so
// a plain difference would not measure the integration.
func summarize(n int, rs []*result) *Summary {
	by := map[string][]*result{}
	for _, r := range rs {
		by[r.setup] = append(by[r.setup], r)
	}
	rounds := len(by[setupOurs])
	s := &Summary{N: n, Rounds: rounds, Setups: map[string]*Setup{}, Ratios: map[string]*float64{}}
	created := func(t *times) time.Time { return t.created }
	for setup, results := range by {
		out := &Setup{}
		var tp []float64
		for _, r := range results {
			tp = append(tp, throughput(r))
		}
		out.ThroughputJobsPerS = mean(tp)
		if results[0].hold {
			summarizeHold(out, results)
		}
		for _, r := range results {
			for k, v := range r.unfinished {
				if out.Unfinished == nil {
					out.Unfinished = map[string]int{}
				}
				out.Unfinished[k] += v
			}
		}
		if setup != setupFloor {
			out.CreatedToWorkloadMS = percentiles(spans(results, created, func(t *times) time.Time { return t.workload }))
			out.AdmittedToUnsuspendedMS = percentiles(spans(results, func(t *times) time.Time { return t.admitted }, func(t *times) time.Time { return t.unsuspended }))
			out.CreatedToRunningMS = percentiles(spans(results, created, func(t *times) time.Time { return t.running }))
			var toStart, start []time.Duration
			for _, r := range results {
				toStart, start = append(toStart, r.starts.toStart...), append(start, r.starts.start...)
			}
			out.AdmissionToStartWriteMS, out.StartWriteMS = percentiles(toStart), percentiles(start)
		}
		s.Setups[setup] = out
	}
	ours, intree := by[setupOurs], by[setupInTree]
	if len(ours) > 0 {
		summarizeOurs(s.Setups[setupOurs], n, ours)
	}
	if len(intree) > 0 && len(ours) > 0 {
		t := s.Setups[setupInTree]
		summarizeInTree(t, n, intree, ours)
		o := s.Setups[setupOurs]
		// A set-up that stalled did not do the same work: no ratio.
		if unfinishedCount(o.Unfinished) == 0 && unfinishedCount(t.Unfinished) == 0 {
			s.Ratios = ratios(o, t)
		}
	}
	if f, o := s.Setups[setupFloor], s.Setups[setupOurs]; f != nil && o != nil {
		s.Ratios["throughput_vs_floor"] = ref(o.ThroughputJobsPerS / f.ThroughputJobsPerS)
	}
	holdRatios(s)
	return s
}

// summarizeHold fills out with a harness-scale run's figures: created →
// QuotaReserved over every round, and the time to reserve them all.
func summarizeHold(out *Setup, results []*result) {
	out.CreatedToReservedMS = percentiles(spans(results, func(t *times) time.Time { return t.created }, func(t *times) time.Time { return t.reserved }))
	var all []float64
	for _, r := range results {
		if _, d := span(r); d > 0 {
			all = append(all, d.Seconds())
		}
	}
	if len(all) > 0 {
		out.AllReservedS = ref(mean(all))
	}
	var streams []float64
	for _, r := range results {
		if d := streamOf(r); d > 0 {
			streams = append(streams, d.Seconds())
		}
	}
	if len(streams) > 0 {
		out.StreamS = ref(mean(streams))
	}
}

// streamOf is the time from the first create sent to the last.
func streamOf(r *result) time.Duration {
	var first, last time.Time
	for _, t := range r.jobs {
		if t.created.IsZero() {
			continue
		}
		if first.IsZero() || t.created.Before(first) {
			first = t.created
		}
		if t.created.After(last) {
			last = t.created
		}
	}
	return last.Sub(first)
}

// holdRatios: each integration's time to reserve every job over the
// floor's (bare Workloads), the harness scale's goal (ours ≤ 1.1).
func holdRatios(s *Summary) {
	f := s.Setups[setupFloor]
	if f == nil || f.AllReservedS == nil {
		return
	}
	for _, name := range []string{setupOurs, setupInTree} {
		if st := s.Setups[name]; st != nil && st.AllReservedS != nil && unfinishedCount(st.Unfinished) == 0 {
			s.Ratios["all_reserved_vs_floor_"+name] = ref(*st.AllReservedS / *f.AllReservedS)
		}
	}
}

// summarizeOurs fills o with trainjob-kueue's own figures over its rounds.
func summarizeOurs(o *Setup, n int, ours []*result) {
	var req, dry, cpu, rss []float64
	verbs, owners := map[string]int{}, map[string]int{}
	for _, r := range ours {
		mine := ownRequests(r.ourVerbs)
		req = append(req, float64(loadharness.Sum(mine))/float64(n))
		dry = append(dry, float64(r.ourDry)/float64(n))
		cpu = append(cpu, r.ours.cpuSeconds)
		rss = append(rss, r.ours.peakRSSMiB)
		for v, c := range mine {
			verbs[v] += c
		}
		for owner, c := range r.ourStatus {
			owners[owner] += c
		}
	}
	o.RequestsPerJob, o.DryRunPerJob, o.CPUSeconds, o.PeakRSSMiB = ref(mean(req)), ref(mean(dry)), ref(mean(cpu)), ref(mean(rss))
	o.RequestsByVerb = verbs
	o.StatusWritesByOwner = owners
	o.ByRound = &Rounds{RequestsPerJob: req, CPUSeconds: cpu}
}

// summarizeInTree fills t with the in-tree integration's figures: each
// round's Kueue in the intree set-up against Kueue in the ours set-up of
// the same round (summarize says why).
func summarizeInTree(t *Setup, n int, intree, ours []*result) {
	var req, dry, cpu, rss []float64
	verbs, inTreeOwners := map[string]int{}, map[string]int{}
	for i := range min(len(intree), len(ours)) {
		it, ou := intree[i], ours[i]
		theirs := integrationRequests(it.kueueVerb)
		if w := inTreeStatusWrites(it.kueueStatus, ou.kueueStatus); w > 0 {
			theirs["write workloads/status"] = w
		}
		for owner, v := range it.kueueStatus {
			inTreeOwners[owner] += v
		}
		req = append(req, float64(loadharness.Sum(theirs))/float64(n))
		dry = append(dry, float64(it.kueueDry-ou.kueueDry)/float64(n))
		cpu = append(cpu, it.kueue.cpuSeconds-ou.kueue.cpuSeconds)
		rss = append(rss, it.kueue.peakRSSMiB-ou.kueue.peakRSSMiB)
		for v, c := range theirs {
			verbs[v] += c
		}
	}
	t.RequestsPerJob, t.DryRunPerJob, t.CPUSeconds, t.PeakRSSMiB = ref(mean(req)), ref(mean(dry)), ref(mean(cpu)), ref(mean(rss))
	t.RequestsByVerb = verbs
	t.StatusWritesByOwner = inTreeOwners
	t.ByRound = &Rounds{RequestsPerJob: req, CPUSeconds: cpu}
}

// ratios of ours to the in-tree integration's figures, where both exist.
func ratios(o, t *Setup) map[string]*float64 {
	r := map[string]*float64{}
	ratio := func(a, b *float64) *float64 {
		if a == nil || b == nil || *b == 0 {
			return nil
		}
		return ref(*a / *b)
	}
	p99 := func(p *Percentiles) *float64 {
		if p == nil {
			return nil
		}
		return ref(p.P99)
	}
	r["requests_per_job"] = ratio(o.RequestsPerJob, t.RequestsPerJob)
	r["unsuspend_p99"] = ratio(p99(o.AdmittedToUnsuspendedMS), p99(t.AdmittedToUnsuspendedMS))
	r["created_to_running_p99"] = ratio(p99(o.CreatedToRunningMS), p99(t.CreatedToRunningMS))
	r["cpu_seconds"] = ratio(o.CPUSeconds, t.CPUSeconds)
	r["peak_rss"] = ratio(o.PeakRSSMiB, t.PeakRSSMiB)
	r["throughput_vs_intree"] = ratio(&o.ThroughputJobsPerS, &t.ThroughputJobsPerS)
	return r
}

func writeSummary(path string, s *Summary) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
