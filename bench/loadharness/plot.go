package loadharness

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Canvas is a white image w pixels wide and h high to draw a plot on.
func Canvas(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	return img
}

// SavePNG writes img to path.
func SavePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Pen is how a Line is drawn: its colour, its width in pixels (at least
// one) and whether it is dashed (every other six points left out).
type Pen struct {
	Color  color.RGBA
	Width  int
	Dashed bool
}

// Line draws a line from (x0, y0) to (x1, y1), Width pixels high.
func Line(img *image.RGBA, x0, y0, x1, y1 int, p Pen) {
	steps := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= steps; i++ {
		if p.Dashed && (i/6)%2 == 1 {
			continue
		}
		x := x0 + (x1-x0)*i/steps
		y := y0 + (y1-y0)*i/steps
		for d := range max(p.Width, 1) {
			img.Set(x, y+d, p.Color)
		}
	}
}

// Label writes text with its baseline's left end at (x, y).
func Label(img *image.RGBA, x, y int, text string, c color.RGBA) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(text)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
