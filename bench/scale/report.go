package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"
)

// report is .bench/scale.json.
type report struct {
	Jobs    int    `json:"jobs"`
	Trainer string `json:"trainer"`
	Kueue   string `json:"kueue"`

	OursPeakRSSMiB  float64 `json:"ours_peak_rss_mib"`
	KueuePeakRSSMiB float64 `json:"kueue_peak_rss_mib"`
	OursPeakHeapMiB float64 `json:"ours_peak_heap_mib"`
	KueuePeakHeap   float64 `json:"kueue_peak_heap_mib"`
	// OursRSSPer1000MiB is the slope of our RSS over the Workloads queued,
	// while they were being queued.
	OursRSSPer1000MiB float64 `json:"ours_rss_per_1000_jobs_mib"`
	// RSSRatio is ours / Kueue's peak RSS.
	RSSRatio float64 `json:"rss_ratio_ours_to_kueue"`

	CreateS    float64 `json:"create_s"`
	AllQueuedS float64 `json:"all_queued_s"`
	// TrainerReportedS: from the first create until Trainer had written
	// the status of every job (v2.3: after it took its runtime snapshot).
	TrainerReportedS float64 `json:"trainer_reported_s"`

	ColdStartReadyS    float64        `json:"cold_start_ready_s"`
	ColdStartIdleS     float64        `json:"cold_start_idle_s"`
	IdleRequestsPerMin float64        `json:"idle_requests_per_min"`
	IdleWritesPerMin   float64        `json:"idle_writes_per_min"`
	IdleByVerb         map[string]int `json:"idle_requests_by_verb"`

	AdmittedToUnsuspendedMS *percentiles `json:"admitted_to_unsuspended_ms"`
	Admitted                int          `json:"admitted"`

	RuntimeEdit *burst `json:"runtime_edit"`
	Restart     *burst `json:"restart"`
	// RestartWrites tells the restart's own writes from those answering
	// other components' changes meanwhile.
	RestartWrites *promptedWrites `json:"restart_writes"`
	// RuntimeEditWrites does the same for the minute after the runtime
	// edit.
	RuntimeEditWrites *promptedWrites `json:"runtime_edit_writes"`

	Samples []sample `json:"samples"`
}

// burst of work one event causes: a runtime edit under many jobs, a
// restart with all of them present.
type burst struct {
	Jobs       int            `json:"jobs"`
	Reconciles int            `json:"reconciles"`
	Requests   int            `json:"requests"`
	Writes     int            `json:"writes"`
	ByVerb     map[string]int `json:"by_verb"`
}

type percentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func latencies(rec *recorder) []time.Duration {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []time.Duration
	for _, t := range rec.jobs {
		if !t.admitted.IsZero() && !t.unsuspended.IsZero() {
			out = append(out, max(t.unsuspended.Sub(t.admitted), 0))
		}
	}
	slices.Sort(out)
	return out
}

func (r *report) fill(s *sampler, rec *recorder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Samples = s.samples
	r.OursPeakRSSMiB, r.KueuePeakRSSMiB = s.oursHWM, s.kueueHWM
	var xs, ys []float64
	for _, x := range s.samples {
		r.OursPeakRSSMiB = max(r.OursPeakRSSMiB, x.OursRSSMiB)
		r.KueuePeakRSSMiB = max(r.KueuePeakRSSMiB, x.KueueRSSMiB)
		r.OursPeakHeapMiB = max(r.OursPeakHeapMiB, x.OursHeapMiB)
		r.KueuePeakHeap = max(r.KueuePeakHeap, x.KueueHeapMiB)
		if (x.Phase == "create" || x.Phase == "queue") && x.OursRSSMiB > 0 {
			xs, ys = append(xs, float64(x.Workloads)/1000), append(ys, x.OursRSSMiB)
		}
	}
	r.OursRSSPer1000MiB = slope(xs, ys)
	if r.KueuePeakRSSMiB > 0 {
		r.RSSRatio = r.OursPeakRSSMiB / r.KueuePeakRSSMiB
	}
	ls := latencies(rec)
	r.Admitted = len(ls)
	if len(ls) > 0 {
		q := func(p float64) float64 { return float64(ls[min(len(ls)-1, int(p*float64(len(ls))))].Milliseconds()) }
		r.AdmittedToUnsuspendedMS = &percentiles{P50: q(0.5), P99: q(0.99), Max: float64(ls[len(ls)-1].Milliseconds())}
	}
}

// slope of the least-squares line through (xs, ys).
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func (r *report) write(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func (r *report) print(w io.Writer) {
	p := r.AdmittedToUnsuspendedMS
	if p == nil {
		p = &percentiles{}
	}
	fmt.Fprintf(w, "| %d queued TrainJobs (Trainer %s, Kueue %s) | measured | target |\n|---|---|---|\n", r.Jobs, r.Trainer, r.Kueue)
	fmt.Fprintf(w, "| trainjob-kueue peak RSS | %.0f MiB | ≤ 256 MiB |\n", r.OursPeakRSSMiB)
	fmt.Fprintf(w, "| Kueue manager peak RSS | %.0f MiB | |\n", r.KueuePeakRSSMiB)
	fmt.Fprintf(w, "| ours / Kueue peak RSS | %.2f× | ≤ 0.5× |\n", r.RSSRatio)
	fmt.Fprintf(w, "| trainjob-kueue peak Go heap | %.0f MiB | |\n", r.OursPeakHeapMiB)
	fmt.Fprintf(w, "| RSS per 1,000 more queued jobs | %.1f MiB | ≤ 10 MiB |\n", r.OursRSSPer1000MiB)
	fmt.Fprintf(w, "| cold start to Ready | %.1f s | ≤ 60 s |\n", r.ColdStartReadyS)
	fmt.Fprintf(w, "| cold start to idle (every job reconciled) | %.1f s | |\n", r.ColdStartIdleS)
	if r.Restart != nil {
		fmt.Fprintf(w, "| requests from restart to idle (writes but lease renewals, Events) | %d (%d) | |\n", r.Restart.Requests, r.Restart.Writes)
	}
	if rw := r.RestartWrites; rw != nil {
		fmt.Fprintf(w, "| of those writes, answering another component's write to the same job after the restart | %d | |\n", rw.Answering)
		fmt.Fprintf(w, "| of those writes, the restart's own (nothing changed before them) | %d | none |\n", rw.Unprompted)
	}
	fmt.Fprintf(w, "| requests in the idle minute (writes but lease renewals, Events) | %.0f (%.0f) | |\n", r.IdleRequestsPerMin, r.IdleWritesPerMin)
	if r.RuntimeEdit != nil {
		fmt.Fprintf(w, "| runtime edit under %d jobs: requests in the next minute (writes) | %d (%d) | no storm |\n", r.RuntimeEdit.Jobs, r.RuntimeEdit.Requests, r.RuntimeEdit.Writes)
	}
	if ew := r.RuntimeEditWrites; ew != nil {
		fmt.Fprintf(w, "| of those writes, answering another component's write to the same job | %d | |\n", ew.Answering)
		fmt.Fprintf(w, "| of those writes, the edit's own (nothing else changed before them) | %d | none |\n", ew.Unprompted)
	}
	fmt.Fprintf(w, "| admitted → unsuspended p50 / p99 (%d jobs in waves) | %.0f / %.0f ms | |\n", r.Admitted, p.P50, p.P99)
	r.RestartWrites.describe(w, "after the restart")
	r.RuntimeEditWrites.describe(w, "after the runtime edit")
}

// describe what prompted the writes of the window when, and which were
// unprompted; nothing for a window not measured.
func (pw *promptedWrites) describe(w io.Writer, when string) {
	if pw == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(pw.Prompts)) {
		fmt.Fprintf(w, "\n%s, %d writes followed %s", when, pw.Prompts[k], k)
	}
	for _, e := range pw.Examples {
		fmt.Fprintf(w, "\n%s, unprompted: %s", when, e)
	}
	fmt.Fprintln(w)
}
