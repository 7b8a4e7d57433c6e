package main

import (
	"fmt"
	"image/color"
	"strconv"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
)

// plotSweep draws three panels side by side, each a quantity against N:
// intree solid red, ours solid blue.
func plotSweep(path string, points []SweepPoint) error {
	const panelW, h, left, bottom, top, gap = 360, 360, 60, 50, 50, 30
	w := 3*panelW + 2*gap + 20
	img := loadharness.Canvas(w, h)
	black := color.RGBA{0, 0, 0, 0xff}
	colors := map[string]color.RGBA{setupInTree: {0xd6, 0x27, 0x28, 0xff}, setupOurs: {0x1f, 0x77, 0xb4, 0xff}}
	panels := []struct {
		title string
		value func(*PerJob) *float64
	}{
		{"API requests per job", func(p *PerJob) *float64 { return p.RequestsPerJob }},
		{"CPU ms per job", func(p *PerJob) *float64 { return p.CPUMillisPerJob }},
		{"admitted->unsuspended p99, s", func(p *PerJob) *float64 {
			if p.AdmittedToUnsuspendP99 == nil {
				return nil
			}
			return ref(*p.AdmittedToUnsuspendP99 / 1000)
		}},
	}
	maxN := 1
	for _, p := range points {
		maxN = max(maxN, p.N)
	}
	for k, panel := range panels {
		x0 := 10 + k*(panelW+gap)
		maxY := 0.0
		for _, p := range points {
			for _, pj := range p.Setups {
				if v := panel.value(pj); v != nil {
					maxY = max(maxY, *v)
				}
			}
		}
		if maxY == 0 {
			maxY = 1
		}
		maxY *= 1.1
		px := func(n int) int { return x0 + left + n*(panelW-left-10)/maxN }
		py := func(v float64) int { return h - bottom - int(v/maxY*float64(h-bottom-top)) }
		loadharness.Line(img, px(0), py(0), px(maxN), py(0), loadharness.Pen{Color: black, Width: 2})
		loadharness.Line(img, px(0), py(0), px(0), py(maxY), loadharness.Pen{Color: black, Width: 2})
		loadharness.Label(img, x0+left, 20, panel.title, black)
		for i := 0; i <= 4; i++ {
			v := maxY * float64(i) / 4
			loadharness.Label(img, x0, py(v)+4, fmt.Sprintf("%.3g", v), black)
		}
		for _, p := range points {
			loadharness.Label(img, px(p.N)-12, h-bottom+18, strconv.Itoa(p.N), black)
		}
		loadharness.Label(img, x0+left+(panelW-left)/2-4, h-12, "N", black)
		for j, setup := range []string{setupInTree, setupOurs} {
			c := colors[setup]
			prevX, prevY, have := 0, 0, false
			for _, p := range points {
				pj := p.Setups[setup]
				if pj == nil || panel.value(pj) == nil {
					continue
				}
				x, y := px(p.N), py(*panel.value(pj))
				for d := -3; d <= 3; d++ {
					loadharness.Line(img, x-3, y+d, x+3, y+d, loadharness.Pen{Color: c, Width: 2})
				}
				if have {
					loadharness.Line(img, prevX, prevY, x, y, loadharness.Pen{Color: c, Width: 2})
				}
				prevX, prevY, have = x, y, true
			}
			ly := top - 18 + 14*j
			loadharness.Line(img, x0+panelW-90, ly-4, x0+panelW-70, ly-4, loadharness.Pen{Color: c, Width: 2})
			loadharness.Label(img, x0+panelW-66, ly, setup, black)
		}
	}
	return loadharness.SavePNG(path, img)
}
