package main

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// palette: Grafana's first classic colours, so the picture reads like one.
var palette = []color.RGBA{
	{0x73, 0xbf, 0x69, 0xff}, {0xf2, 0xcc, 0x0c, 0xff}, {0x8a, 0xb8, 0xff, 0xff}, {0xff, 0x78, 0x0a, 0xff},
	{0xf2, 0x49, 0x5c, 0xff}, {0x57, 0x94, 0xf2, 0xff}, {0xb8, 0x77, 0xd9, 0xff}, {0x70, 0x5d, 0xa0, 0xff},
}

const columns = 2

// drawPanels writes the panels as a grid of line charts, two per row, the time
// axis in minutes since the first scrape.
func drawPanels(w io.Writer, title string, panels []panelData, sp span) error {
	if len(panels) == 0 {
		return fmt.Errorf("the dashboard has no panel with a query")
	}
	rows := (len(panels) + columns - 1) / columns
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, columns)
	}
	for i, pd := range panels {
		p, err := chart(pd, sp)
		if err != nil {
			return err
		}
		grid[i/columns][i%columns] = p
	}
	const width, rowHeight = 16 * vg.Inch, 3.2 * vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(width, vg.Length(rows)*rowHeight+0.5*vg.Inch), vgimg.UseDPI(96))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	header := draw.Canvas{Canvas: dc.Canvas, Rectangle: dc.Rectangle}
	header.Min.Y = header.Max.Y - 0.5*vg.Inch
	font := plot.DefaultFont
	font.Size = 16
	header.FillText(draw.TextStyle{Color: color.Black, Font: font, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter},
		vg.Point{X: (header.Min.X + header.Max.X) / 2, Y: (header.Min.Y + header.Max.Y) / 2},
		fmt.Sprintf("%s — %s, %s of the demo", title, sp.start.UTC().Format("2006-01-02 15:04 UTC"), sp.end.Sub(sp.start).Round(1e9)))
	body := dc
	body.Max.Y -= 0.5 * vg.Inch
	tiles := draw.Tiles{Rows: rows, Cols: columns, PadX: vg.Inch / 4, PadY: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align(grid, tiles, body)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// chart is one panel: a line per curve, "no data" when the queries
// returned none (as Grafana says).
func chart(pd panelData, sp span) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pd.title
	p.X.Label.Text = "minutes"
	p.X.Min, p.X.Max = 0, math.Max(sp.end.Sub(sp.start).Minutes(), 0.1)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	if len(pd.curves) == 0 {
		p.Y.Min, p.Y.Max = 0, 1
		p.Title.Text += " (no data)"
		return p, nil
	}
	for i, c := range pd.curves {
		xys := make(plotter.XYs, len(c.points))
		for k, pt := range c.points {
			xys[k] = plotter.XY{X: pt.at.Sub(sp.start).Minutes(), Y: pt.value}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("panel %q, %s: %w", pd.title, c.legend, err)
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(c.legend, l)
	}
	return p, nil
}
