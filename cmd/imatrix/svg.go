package main

import (
	"fmt"
	"html"
	"math"
	"path/filepath"
	"strings"

	"github.com/gquant/gquant/imatrix"
)

// groupColors are the bar colours of the layer parts (Tableau 10).
var groupColors = map[imatrix.Group]string{
	imatrix.GroupAttn:    "#4c78a8",
	imatrix.GroupFFN:     "#f58518",
	imatrix.GroupExperts: "#54a24b",
	imatrix.GroupShared:  "#b279a2",
	imatrix.GroupOther:   "#9d755d",
}

// viridis stops for the heat map, low to high.
var viridis = [][3]float64{
	{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37},
}

func heatColor(f float64) string {
	f = math.Max(0, math.Min(1, f)) * float64(len(viridis)-1)
	i := min(int(f), len(viridis)-2)
	t := f - float64(i)
	var c [3]int
	for k := range c {
		c[k] = int(math.Round(viridis[i][k]*(1-t) + viridis[i+1][k]*t))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

// niceStep returns a round tick step for an axis up to top.
func niceStep(top float64, ticks int) float64 {
	raw := top / float64(ticks)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// renderSVG draws the per-layer bars (left) and the expert heat map
// (right), one row per layer in both.
func renderSVG(path string, m *imatrix.Matrix, layers []imatrix.LayerSummary) string {
	groups := groupsPresent(layers)
	nexp := 0
	for _, s := range layers {
		nexp = max(nexp, len(s.Experts))
	}
	const (
		margin   = 20
		labelW   = 48  // layer labels
		barsW    = 340 // bar panel
		gap      = 40
		titleH   = 64
		axisH    = 44
		legendH  = 30
		fontSize = 12
	)
	rowH := math.Max(10, math.Min(40, 560/float64(len(layers))))
	cellW := 0.0
	heatW := 0.0
	if nexp > 0 {
		cellW = math.Max(2, math.Min(36, 560/float64(nexp)))
		heatW = cellW * float64(nexp)
	}
	plotH := rowH * float64(len(layers))
	width := float64(margin*2 + labelW + barsW)
	if nexp > 0 {
		width += gap + labelW + heatW + 70
	}
	height := titleH + plotH + axisH + legendH + margin
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="%d">`+"\n",
		width, height, width, height, fontSize)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	ds := ""
	if len(m.Datasets) > 0 {
		ds = ", dataset " + strings.Join(m.Datasets, ", ")
	}
	p(`<text x="%d" y="24" font-size="16" font-weight="bold">Importance matrix %s</text>`+"\n", margin, html.EscapeString(filepath.Base(path)))
	p(`<text x="%d" y="44" fill="#555">%d entries, %d chunks%s</text>`+"\n", margin, m.Len(), m.Chunks, html.EscapeString(ds))

	// Left panel: one group of bars per layer on a common axis.
	x0 := float64(margin + labelW)
	y0 := float64(titleH)
	top := 0.0
	for _, v := range groupMax(layers) {
		top = math.Max(top, v)
	}
	if top <= 0 {
		top = 1
	}
	step := niceStep(top, 4)
	axisTop := math.Ceil(top/step) * step
	scale := (barsW - 40) / axisTop
	p(`<text x="%.1f" y="%.1f" font-weight="bold">Mean importance per layer</text>`+"\n", x0, y0-6)
	for v := 0.0; v <= axisTop+step/2; v += step {
		x := x0 + v*scale
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, y0, x, y0+plotH)
		p(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`+"\n", x, y0+plotH+16, trimFloat(v))
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">mean of the per-column means (input activation²)</text>`+"\n", x0+(barsW-40)/2, y0+plotH+34)
	thick := (rowH - 2) / float64(max(1, len(groups)))
	// Label every layer while the rows are tall enough for the text.
	labelEvery := int(math.Ceil(14 / rowH))
	label := func(r int, s imatrix.LayerSummary) bool { return r%labelEvery == 0 || s.Layer < 0 }
	for r, s := range layers {
		y := y0 + float64(r)*rowH
		if r%2 == 1 {
			p(`<rect x="%d" y="%.1f" width="%.1f" height="%.1f" fill="#f4f4f4"/>`+"\n", margin, y, float64(labelW+barsW), rowH)
		}
		if label(r, s) {
			p(`<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", x0-8, y+rowH/2, layerName(s.Layer))
		}
		for gi, g := range groups {
			v := s.Mean[g]
			if math.IsNaN(v) {
				continue
			}
			p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>layer %s %s: %.4g</title></rect>`+"\n",
				x0, y+1+float64(gi)*thick, v*scale, math.Max(1, thick-1), groupColors[g], layerName(s.Layer), g, v)
		}
	}
	// Legend of the groups.
	lx := x0
	ly := y0 + plotH + axisH + 8
	for _, g := range groups {
		p(`<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`+"\n", lx, ly, groupColors[g])
		p(`<text x="%.1f" y="%.1f">%s</text>`+"\n", lx+16, ly+10, g)
		lx += 16 + float64(len(g))*7.5 + 18
	}
	if nexp == 0 {
		p("</svg>\n")
		return b.String()
	}

	// Right panel: expert heat map.
	hx := float64(margin+labelW+barsW+gap) + labelW
	lo, hi := expertRange(layers)
	// Hatching shows in cells wide enough for it; narrow cells get a
	// solid colour outside the heat scale.
	noData := "url(#nodata)"
	if cellW < 8 || rowH < 8 {
		noData = "#e4202a"
	}
	p(`<text x="%.1f" y="%.1f" font-weight="bold">Relative expert importance</text>`+"\n", hx-labelW, y0-6)
	p(`<defs><pattern id="nodata" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c33" stroke-width="2"/></pattern></defs>` + "\n")
	for r, s := range layers {
		y := y0 + float64(r)*rowH
		if label(r, s) {
			p(`<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", hx-8, y+rowH/2, layerName(s.Layer))
		}
		empty := map[int]bool{}
		for _, j := range s.Empty {
			empty[j] = true
		}
		for j, v := range s.Experts {
			x := hx + float64(j)*cellW
			fill := heatColor(position(v, lo, hi))
			what := fmt.Sprintf("%.2fx", v)
			if empty[j] {
				fill, what = noData, "no data"
			}
			p(`<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s"><title>layer %s expert %d: %s</title></rect>`+"\n",
				x, y+0.5, cellW, rowH-1, fill, layerName(s.Layer), j, what)
		}
	}
	// Expert axis: label about ten experts.
	every := max(1, int(math.Ceil(float64(nexp)/10)))
	if every > 1 {
		every = int(niceStep(float64(nexp), 10))
	}
	for j := 0; j < nexp; j += every {
		x := hx + (float64(j)+0.5)*cellW
		p(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%d</text>`+"\n", x, y0+plotH+16, j)
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">expert (1.00x = the layer's average expert)</text>`+"\n", hx+heatW/2, y0+plotH+34)
	// Colour scale and the no-data swatch.
	sx := hx + heatW + 16
	const steps = 40
	for i := 0; i < steps; i++ {
		f := 1 - float64(i)/steps
		p(`<rect x="%.1f" y="%.2f" width="14" height="%.2f" fill="%s"/>`+"\n", sx, y0+float64(i)*plotH/steps, plotH/steps+0.5, heatColor(f))
	}
	for _, f := range []float64{0, 0.5, 1} {
		p(`<text x="%.1f" y="%.1f" dominant-baseline="middle" fill="#555">%.2fx</text>`+"\n", sx+18, y0+(1-f)*plotH, lo+f*(hi-lo))
	}
	p(`<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s" stroke="#999"/>`+"\n", hx, ly, noData)
	p(`<text x="%.1f" y="%.1f">no data</text>`+"\n", hx+16, ly+10)
	p("</svg>\n")
	return b.String()
}

// trimFloat prints an axis value without trailing zeros.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.4g", v)
	return s
}
