package loadharness

import (
	"image"
	"image/color"
	"testing"
)

func TestALinesPenSetsItsWidthAndDashes(t *testing.T) {
	red := color.RGBA{0xff, 0, 0, 0xff}
	count := func(p Pen) int {
		img := image.NewRGBA(image.Rect(0, 0, 40, 10))
		Line(img, 0, 2, 23, 2, p)
		n := 0
		for x := range 40 {
			for y := range 10 {
				if img.RGBAAt(x, y) == red {
					n++
				}
			}
		}
		return n
	}
	for name, tc := range map[string]struct {
		pen  Pen
		want int
	}{
		"thin":         {Pen{Color: red}, 24},
		"width zero":   {Pen{Color: red, Width: 0}, 24},
		"two wide":     {Pen{Color: red, Width: 2}, 48},
		"dashed, thin": {Pen{Color: red, Dashed: true}, 12},
		"dashed, wide": {Pen{Color: red, Width: 2, Dashed: true}, 24},
	} {
		if got := count(tc.pen); got != tc.want {
			t.Errorf("%s: %d pixels set, want %d", name, got, tc.want)
		}
	}
}
