package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
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

// plot draws memory over time (top) and each job's admitted → unsuspended
// latency at its admission time (bottom), with the phases marked.
func plot(path string, s *sampler, rec *recorder) error {
	const w, h, left, right, gap = 1100, 760, 70, 200, 40
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	black := color.RGBA{0, 0, 0, 0xff}
	grey := color.RGBA{0xaa, 0xaa, 0xaa, 0xff}
	s.mu.Lock()
	samples := slices.Clone(s.samples)
	start := s.start
	s.mu.Unlock()
	maxT := 1.0
	maxMiB := 1.0
	for _, x := range samples {
		maxT = max(maxT, x.At)
		maxMiB = max(maxMiB, x.OursRSSMiB, x.KueueRSSMiB)
	}
	lat, maxMS := startLatencies(rec, start)
	top0, bot0 := 40, 440 // memory panel
	top1, bot1 := bot0+gap+20, h-40
	px := func(t float64) int { return left + int(t/maxT*float64(w-left-right)) }
	pyMem := func(v float64) int { return bot0 - int(v/maxMiB*float64(bot0-top0)) }
	pyLat := func(v float64) int { return bot1 - int(v/maxMS*float64(bot1-top1)) }
	for _, p := range [][2]int{{top0, bot0}, {top1, bot1}} {
		line(img, px(0), p[1], px(maxT), p[1], black)
		line(img, px(0), p[0], px(0), p[1], black)
	}
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		label(img, 5, pyMem(maxMiB*f)+4, fmt.Sprintf("%.0f MiB", maxMiB*f), black)
		label(img, 5, pyLat(maxMS*f)+4, fmt.Sprintf("%.0f ms", maxMS*f), black)
		label(img, px(maxT*f)-10, bot1+18, fmt.Sprintf("%.0fs", maxT*f), black)
	}
	label(img, left, 20, "memory over time (RSS solid, Go heap thin) and phases", black)
	label(img, left, top1-8, "admitted -> unsuspended, per job, at its admission", black)
	phase := ""
	for _, x := range samples {
		if x.Phase != phase {
			phase = x.Phase
			line(img, px(x.At), top0, px(x.At), bot0, grey)
			label(img, px(x.At)+2, top0+12, phase, grey)
		}
	}
	series := []struct {
		name string
		c    color.RGBA
		v    func(sample) float64
	}{
		{"trainjob-kueue RSS", color.RGBA{0x1f, 0x77, 0xb4, 0xff}, func(x sample) float64 { return x.OursRSSMiB }},
		{"Kueue RSS", color.RGBA{0xd6, 0x27, 0x28, 0xff}, func(x sample) float64 { return x.KueueRSSMiB }},
		{"trainjob-kueue heap", color.RGBA{0x6b, 0xae, 0xd6, 0xff}, func(x sample) float64 { return x.OursHeapMiB }},
		{"Kueue heap", color.RGBA{0xfc, 0x92, 0x72, 0xff}, func(x sample) float64 { return x.KueueHeapMiB }},
	}
	for k, sr := range series {
		for i := 1; i < len(samples); i++ {
			line(img, px(samples[i-1].At), pyMem(sr.v(samples[i-1])), px(samples[i].At), pyMem(sr.v(samples[i])), sr.c)
			if k < 2 {
				line(img, px(samples[i-1].At), pyMem(sr.v(samples[i-1]))+1, px(samples[i].At), pyMem(sr.v(samples[i]))+1, sr.c)
			}
		}
		y := top0 + 20*k
		line(img, w-right+10, y, w-right+30, y, sr.c)
		label(img, w-right+34, y+4, sr.name, black)
	}
	blue := color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	for _, p := range lat {
		x, y := px(p.t), pyLat(p.ms)
		for dx := -1; dx <= 1; dx++ {
			for dy := -1; dy <= 1; dy++ {
				img.Set(x+dx, y+dy, blue)
			}
		}
	}
	return savePNG(path, img)
}

// latency is one job's admitted -> unsuspended, at its admission.
type latency struct{ t, ms float64 }

// startLatencies are the jobs' admitted -> unsuspended times (seconds
// since start, milliseconds), and the largest (at least 1).
func startLatencies(rec *recorder, start time.Time) ([]latency, float64) {
	var lat []latency
	maxMS := 1.0
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, t := range rec.jobs {
		if !t.admitted.IsZero() && !t.unsuspended.IsZero() {
			p := latency{t.admitted.Sub(start).Seconds(), float64(t.unsuspended.Sub(t.admitted).Milliseconds())}
			lat = append(lat, p)
			maxMS = max(maxMS, p.ms)
		}
	}
	return lat, maxMS
}

func savePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	steps := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= steps; i++ {
		img.Set(x0+(x1-x0)*i/steps, y0+(y1-y0)*i/steps, c)
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
