package main

import (
	"fmt"
	"image/color"
	"slices"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
)

// plotCDFs draws the CDF of "created → admitted" for every set-up (the one
// latency the floor has too) and "created → all pods running" dashed for
// intree and ours.
func plotCDFs(path string, rs []*result) error {
	const w, h, left, bottom, top, right = 1060, 600, 70, 50, 40, 250
	img := loadharness.Canvas(w, h)
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
	loadharness.Line(img, px(0), py(0), px(maxX), py(0), loadharness.Pen{Color: black, Width: 2})
	loadharness.Line(img, px(0), py(0), px(0), py(1), loadharness.Pen{Color: black, Width: 2})
	for i := 0; i <= 4; i++ {
		q := float64(i) / 4
		loadharness.Label(img, 10, py(q)+4, fmt.Sprintf("%.2f", q), black)
		sec := maxX * q
		loadharness.Label(img, px(sec)-10, h-bottom+18, fmt.Sprintf("%.1fs", sec), black)
	}
	loadharness.Label(img, left, 20, "latency CDF (fraction of jobs within x)", black)
	for k, s := range all {
		xs := slices.Clone(s.xs)
		slices.Sort(xs)
		prevX, prevY := px(0), py(0)
		for i, x := range xs {
			nx, ny := px(x.Seconds()), py(float64(i+1)/float64(len(xs)))
			loadharness.Line(img, prevX, prevY, nx, prevY, loadharness.Pen{Color: s.c, Width: 2, Dashed: s.dashed})
			loadharness.Line(img, nx, prevY, nx, ny, loadharness.Pen{Color: s.c, Width: 2, Dashed: s.dashed})
			prevX, prevY = nx, ny
		}
		y := top + 20*k
		loadharness.Line(img, w-right+10, y, w-right+30, y, loadharness.Pen{Color: s.c, Width: 2, Dashed: s.dashed})
		loadharness.Label(img, w-right+34, y+4, s.label, black)
	}
	return loadharness.SavePNG(path, img)
}
