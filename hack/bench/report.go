package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
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
	ThroughputJobsPerS  float64      `json:"throughput_jobs_per_s"`
	CPUSeconds          *float64     `json:"cpu_seconds"`
	PeakRSSMiB          *float64     `json:"peak_rss_mib"`
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

func percentiles(samples []time.Duration) *Percentiles {
	if len(samples) == 0 {
		return nil
	}
	slices.Sort(samples)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(samples)))) - 1
		i = max(0, min(i, len(samples)-1))
		return float64(samples[i].Microseconds()) / 1000
	}
	return &Percentiles{P50: at(0.50), P90: at(0.90), P99: at(0.99)}
}

// spans collects one latency over every job of the results: to - from,
// where both were seen.
func spans(rs []*result, from, to func(*times) time.Time) []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		for _, t := range r.jobs {
			a, b := from(t), to(t)
			if a.IsZero() || b.IsZero() {
				continue
			}
			out = append(out, max(b.Sub(a), 0))
		}
	}
	return out
}

// throughput is jobs admitted per second, the first create to the last
// admission; in a harness-scale run (r.hold), quota reservations.
func throughput(r *result) float64 {
	n, d := span(r)
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// span is how many of r's jobs were admitted (reserved, r.hold) and the
// time from the first create to the last of them.
func span(r *result) (int, time.Duration) {
	var firstCreated, last time.Time
	n := 0
	for _, t := range r.jobs {
		at := t.admitted
		if r.hold {
			at = t.reserved
		}
		if at.IsZero() {
			continue
		}
		n++
		if firstCreated.IsZero() || (!t.created.IsZero() && t.created.Before(firstCreated)) {
			firstCreated = t.created
		}
		if at.After(last) {
			last = at
		}
	}
	return n, last.Sub(firstCreated)
}

func ref[T any](v T) *T { return &v }

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// integrationRequests keeps, of one identity's requests by "verb
// resource[/subresource]", those a TrainJob integration makes for its jobs:
// on TrainJobs, and on Workloads except their status. Events (the audit
// log does not say what they are about), leases and Kueue's queue status
// writes are left out for both integrations.
func integrationRequests(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		_, what, _ := strings.Cut(k, " ")
		if strings.HasPrefix(what, "trainjobs") || what == "workloads" {
			out[k] += v
		}
	}
	return out
}

// ownRequests keeps all of trainjob-kueue's requests but events and leases
// (left out for both integrations): its whole process is the integration,
// so what it reads to compute PodSets (a v2.3 job's runtime snapshot, say)
// counts, though the in-tree integration reads no such thing.
func ownRequests(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		_, what, _ := strings.Cut(k, " ")
		if what == "events" || what == "leases" {
			continue
		}
		out[k] += v
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// jobFrameworkOwned: field managers of Workload status writes only Kueue's
// job framework makes (the PodsReady condition, reclaimable pods). Kueue's
// scheduler never uses them, so in Kueue's process they are the in-tree
// integration's, counted exactly.
func jobFrameworkOwned(owner string) bool {
	return strings.HasPrefix(owner, "kueue-job-controller") || owner == "kueue-reclaimable-pods"
}

// inTreeStatusWrites are the in-tree integration's writes of Workload
// status: those of the job framework's own field managers in Kueue's
// process, plus its writes under shared ones (kueue-admission: the
// scheduler's admissions and the job framework's Finished) beyond what
// Kueue wrote under them in the ours set-up.
func inTreeStatusWrites(intree, ours map[string]int) int {
	n := 0
	shared := map[string]int{}
	for owner, v := range intree {
		if jobFrameworkOwned(owner) {
			n += v
		} else {
			shared[owner] += v
		}
	}
	for owner, v := range shared {
		n += max(0, v-ours[owner])
	}
	return n
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
		req = append(req, float64(sum(mine))/float64(n))
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
		req = append(req, float64(sum(theirs))/float64(n))
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

// plotCDFs draws the CDF of "created → admitted" for every set-up (the one
// latency the floor has too) and "created → all pods running" dashed for
// intree and ours.
func plotCDFs(path string, rs []*result) error {
	const w, h, left, bottom, top, right = 1060, 600, 70, 50, 40, 250
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	colors := map[string]color.RGBA{setupFloor: {0x55, 0x55, 0x55, 0xff}, setupInTree: {0xd6, 0x27, 0x28, 0xff}, setupOurs: {0x1f, 0x77, 0xb4, 0xff}}
	by := map[string][]*result{}
	for _, r := range rs {
		by[r.setup] = append(by[r.setup], r)
	}
	created := func(t *times) time.Time { return t.created }
	type series struct {
		label  string
		c      color.RGBA
		dashed bool
		xs     []time.Duration
	}
	var all []series
	for _, setup := range []string{setupFloor, setupInTree, setupOurs} {
		if len(by[setup]) == 0 {
			continue
		}
		all = append(all, series{setup + ": created->admitted", colors[setup], false, spans(by[setup], created, func(t *times) time.Time { return t.admitted })})
		if setup != setupFloor {
			all = append(all, series{setup + ": created->running", colors[setup], true, spans(by[setup], created, func(t *times) time.Time { return t.running })})
		}
	}
	maxX := 0.0
	for _, s := range all {
		for _, x := range s.xs {
			maxX = max(maxX, x.Seconds())
		}
	}
	if maxX == 0 {
		maxX = 1
	}
	px := func(sec float64) int { return left + int(sec/maxX*float64(w-left-right)) }
	py := func(q float64) int { return h - bottom - int(q*float64(h-bottom-top)) }
	black := color.RGBA{0, 0, 0, 0xff}
	line(img, px(0), py(0), px(maxX), py(0), black, false)
	line(img, px(0), py(0), px(0), py(1), black, false)
	for i := 0; i <= 4; i++ {
		q := float64(i) / 4
		label(img, 10, py(q)+4, fmt.Sprintf("%.2f", q), black)
		sec := maxX * q
		label(img, px(sec)-10, h-bottom+18, fmt.Sprintf("%.1fs", sec), black)
	}
	label(img, left, 20, "latency CDF (fraction of jobs within x)", black)
	for k, s := range all {
		xs := slices.Clone(s.xs)
		slices.Sort(xs)
		prevX, prevY := px(0), py(0)
		for i, x := range xs {
			nx, ny := px(x.Seconds()), py(float64(i+1)/float64(len(xs)))
			line(img, prevX, prevY, nx, prevY, s.c, s.dashed)
			line(img, nx, prevY, nx, ny, s.c, s.dashed)
			prevX, prevY = nx, ny
		}
		y := top + 20*k
		line(img, w-right+10, y, w-right+30, y, s.c, s.dashed)
		label(img, w-right+34, y+4, s.label, black)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA, dashed bool) {
	steps := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= steps; i++ {
		if dashed && (i/6)%2 == 1 {
			continue
		}
		x := x0 + (x1-x0)*i/steps
		y := y0 + (y1-y0)*i/steps
		img.Set(x, y, c)
		img.Set(x, y+1, c)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func label(img *image.RGBA, x, y int, text string, c color.RGBA) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(text)
}

// check is what the smoke run asserts: every measurement came out, and
// trainjob-kueue did without dry runs.
func check(s *Summary) error {
	for _, name := range []string{setupFloor, setupInTree, setupOurs} {
		st := s.Setups[name]
		if st == nil || st.ThroughputJobsPerS <= 0 {
			return fmt.Errorf("no admissions measured for %s", name)
		}
		if unfinishedCount(st.Unfinished) > 0 {
			return fmt.Errorf("%s stalled: %s", name, describeStates(st.Unfinished))
		}
		if name == setupFloor {
			continue
		}
		if st.CreatedToWorkloadMS == nil || st.AdmittedToUnsuspendedMS == nil || st.CreatedToRunningMS == nil || st.RequestsPerJob == nil || st.CPUSeconds == nil {
			return fmt.Errorf("%s: a measurement is missing: %+v", name, st)
		}
	}
	for name, r := range s.Ratios {
		if r == nil {
			return fmt.Errorf("ratio %s could not be computed", name)
		}
	}
	if d := s.Setups[setupOurs].DryRunPerJob; *d != 0 {
		return fmt.Errorf("trainjob-kueue made %.2f dry-run requests per job", *d)
	}
	return nil
}
