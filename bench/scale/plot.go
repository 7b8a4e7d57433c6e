package main

import (
	"fmt"
	"image/color"
	"slices"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
)

// plot draws memory over time (top) and each job's admitted → unsuspended
// latency at its admission time (bottom), with the phases marked.
func plot(path string, s *sampler, rec *recorder) error {
	const w, h, left, right, gap = 1100, 760, 70, 200, 40
	img := loadharness.Canvas(w, h)
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
		loadharness.Line(img, px(0), p[1], px(maxT), p[1], loadharness.Pen{Color: black})
		loadharness.Line(img, px(0), p[0], px(0), p[1], loadharness.Pen{Color: black})
	}
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		loadharness.Label(img, 5, pyMem(maxMiB*f)+4, fmt.Sprintf("%.0f MiB", maxMiB*f), black)
		loadharness.Label(img, 5, pyLat(maxMS*f)+4, fmt.Sprintf("%.0f ms", maxMS*f), black)
		loadharness.Label(img, px(maxT*f)-10, bot1+18, fmt.Sprintf("%.0fs", maxT*f), black)
	}
	loadharness.Label(img, left, 20, "memory over time (RSS solid, Go heap thin) and phases", black)
	loadharness.Label(img, left, top1-8, "admitted -> unsuspended, per job, at its admission", black)
	phase := ""
	for _, x := range samples {
		if x.Phase != phase {
			phase = x.Phase
			loadharness.Line(img, px(x.At), top0, px(x.At), bot0, loadharness.Pen{Color: grey})
			loadharness.Label(img, px(x.At)+2, top0+12, phase, grey)
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
		// RSS solid, heap thin.
		pen := loadharness.Pen{Color: sr.c, Width: 1}
		if k < 2 {
			pen.Width = 2
		}
		for i := 1; i < len(samples); i++ {
			loadharness.Line(img, px(samples[i-1].At), pyMem(sr.v(samples[i-1])), px(samples[i].At), pyMem(sr.v(samples[i])), pen)
		}
		y := top0 + 20*k
		loadharness.Line(img, w-right+10, y, w-right+30, y, loadharness.Pen{Color: sr.c})
		loadharness.Label(img, w-right+34, y+4, sr.name, black)
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
	return loadharness.SavePNG(path, img)
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
