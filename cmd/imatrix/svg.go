package main

import (
	"fmt"
	"html"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
)

// groupColors are the bar colours of the layer parts (Tableau 10).
var groupColors = map[imatrix.Group]string{
	imatrix.GroupAttn:    "#4c78a8",
	imatrix.GroupFFN:     "#f58518",
	imatrix.GroupExperts: "#54a24b",
	imatrix.GroupShared:  "#b279a2",
	imatrix.GroupOther:   "#9d755d",
}

// diverging is ColorBrewer's RdBu without its two darkest ends, blue (less
// important than the layer's average expert) through white (1.0x) to red
// (more important). Black, outside the scale, marks experts without data.
var diverging = [][3]float64{
	{33, 102, 172}, {67, 147, 195}, {146, 197, 222}, {209, 229, 240}, {247, 247, 247},
	{253, 219, 199}, {244, 165, 130}, {214, 96, 77}, {178, 24, 43},
}

const noDataColor = "#000000"

// heatColor is the colour at f in [0, 1] of the diverging scale.
func heatColor(f float64) string {
	f = math.Max(0, math.Min(1, f)) * float64(len(diverging)-1)
	i := min(int(f), len(diverging)-2)
	t := f - float64(i)
	var c [3]int
	for k := range c {
		c[k] = int(math.Round(diverging[i][k]*(1-t) + diverging[i+1][k]*t))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

// logScale maps relative importance to [0, 1] on a log scale centred on
// 1.0x (at 0.5) and symmetric, so that 0.5x and 2x are equally far from
// the middle. Its half-width R (in natural log units) covers the 1st to
// 99th percentile of the values: a handful of outliers saturate at the
// ends instead of washing out everything else. A linear scale from the
// smallest to the largest value hid the spread: with one expert at 37x,
// the whole of 0.3x..3x shared one colour.
type logScale struct {
	R              float64
	clipLo, clipHi bool // values beyond the ends exist (they saturate)
}

// minLogRange keeps the scale from magnifying noise in a file whose
// experts are all within 1 % of each other.
var minLogRange = math.Log(1.01)

func newLogScale(layers []imatrix.LayerSummary) logScale {
	var logs []float64
	for _, s := range layers {
		empty := emptySet(s)
		for j, v := range s.Experts {
			if !empty[j] && v > 0 {
				logs = append(logs, math.Log(v))
			}
		}
	}
	if len(logs) == 0 {
		return logScale{R: minLogRange}
	}
	slices.Sort(logs)
	lo := logs[int(0.01*float64(len(logs)-1))]
	hi := logs[int(math.Ceil(0.99*float64(len(logs)-1)))]
	r := math.Max(minLogRange, math.Max(-lo, hi))
	return logScale{R: r, clipLo: logs[0] < -r, clipHi: logs[len(logs)-1] > r}
}

// pos is v's place on the scale (0 for v <= 0).
func (s logScale) pos(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return math.Max(0, math.Min(1, 0.5+math.Log(v)/(2*s.R)))
}

// ticks are the scale's labelled values above 1: a round factor near the
// end of the scale and one about halfway (in log terms) to it.
func (s logScale) ticks() []float64 {
	factors := []float64{1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2, 3, 4, 5, 10, 20, 50, 100, 200, 500, 1000}
	top := 0
	for i, f := range factors {
		if math.Log(f) <= s.R*1.0001 {
			top = i
		}
	}
	out := []float64{factors[top]}
	if top > 0 {
		mid := 0
		for i := range top {
			if math.Abs(math.Log(factors[i])-math.Log(factors[top])/2) < math.Abs(math.Log(factors[mid])-math.Log(factors[top])/2) {
				mid = i
			}
		}
		out = []float64{factors[mid], factors[top]}
	}
	return out
}

// factorText prints a relative importance: 2x, 0.5x, 1.05x, 0.952x.
func factorText(v float64) string {
	return fmt.Sprintf("%.3gx", v)
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

// labelStep is how often to label rows or columns of size px when a label
// needs need px: every one when they fit, else every tenth (every 20th,
// 50th, ... when even that is too tight).
func labelStep(px, need float64) int {
	for _, step := range []int{1, 10, 20, 50, 100, 200, 500} {
		if float64(step)*px >= need {
			return step
		}
	}
	return 1000
}

func emptySet(s imatrix.LayerSummary) map[int]bool {
	out := make(map[int]bool, len(s.Empty))
	for _, j := range s.Empty {
		out[j] = true
	}
	return out
}

// svg builds the picture's text.
type svg struct{ strings.Builder }

func (b *svg) p(format string, a ...any) { fmt.Fprintf(b, format, a...) }

// renderSVG draws the mean importance of each layer part as bars, one
// column per part on its own scale (left), and each expert's importance
// relative to its layer's average expert as a heat map on a log scale
// centred on 1.0x (right), one row per layer in both. Rows and experts are
// labelled one by one while they are wide enough, else every tenth, so
// that Kimi-K2 (61 layers x 384 experts) stays readable.
func renderSVG(path string, m *imatrix.Matrix, layers []imatrix.LayerSummary) string {
	groups := groupsPresent(layers)
	tops := groupMax(layers)
	nexp := 0
	for _, s := range layers {
		nexp = max(nexp, len(s.Experts))
	}
	const (
		margin   = 20
		labelW   = 44  // layer labels
		colW     = 110 // one group's bars
		colGap   = 16
		gap      = 36 // between the panels
		titleH   = 108
		axisH    = 48
		footH    = 28
		fontSize = 12
		small    = 10
	)
	nrows := max(1, len(layers))
	rowH := math.Max(8, math.Min(40, 640/float64(nrows)))
	// The entries outside the blocks (output.weight, ...) come last, a
	// little apart from the last layer.
	otherGap := 0.0
	if len(layers) > 1 && layers[len(layers)-1].Layer < 0 {
		otherGap = math.Max(4, rowH/2)
	}
	plotH := rowH*float64(nrows) + otherGap
	layerStep := labelStep(rowH, 13)
	barsW := float64(len(groups)*colW + max(0, len(groups)-1)*colGap)
	cellW := 0.0
	heatW := 0.0
	expStep := 1
	if nexp > 0 {
		cellW = math.Max(2, math.Min(36, 1000/float64(nexp)))
		heatW = cellW * float64(nexp)
		// An expert label is up to len(nexp-1) digits of about 6.5 px.
		expStep = labelStep(cellW, float64(len(fmt.Sprint(nexp-1)))*6.5+6)
	}
	const heatTitle = "Expert importance relative to the layer's average expert (log scale)"
	width := float64(margin*2+labelW) + barsW
	if nexp > 0 {
		// The panel's title (bold, about 7.5 px a character) may be wider
		// than the heat map of a model with few experts.
		width += gap + math.Max(labelW+heatW+90, 7.5*float64(len(heatTitle)))
	}
	height := titleH + plotH + axisH + footH + margin
	var b svg
	b.p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="%d">`+"\n",
		width, height, width, height, fontSize)
	b.p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	ds := ""
	if len(m.Datasets) > 0 {
		ds = ", dataset " + strings.Join(m.Datasets, ", ")
	}
	b.p(`<text x="%d" y="24" font-size="16" font-weight="bold">Importance matrix %s</text>`+"\n", margin, svgText(filepath.Base(path)))
	b.p(`<text x="%d" y="44" fill="#555">%d entries, %d chunks%s</text>`+"\n", margin, m.Len(), m.Chunks, svgText(ds))
	if nexp > 0 {
		b.p(`<text x="%d" y="62" fill="#555">%s</text>`+"\n", margin, svgText(expertSummary(layers)))
	}
	y0 := float64(titleH)
	rowY := func(r int) float64 {
		if layers[r].Layer < 0 {
			return y0 + float64(r)*rowH + otherGap
		}
		return y0 + float64(r)*rowH
	}
	labelled := func(r int, s imatrix.LayerSummary) bool { return s.Layer < 0 || s.Layer%layerStep == 0 }
	// Layer labels and ticks at the left of a panel whose left edge is x.
	layerAxis := func(x float64) {
		for r, s := range layers {
			y := rowY(r) + rowH/2
			switch {
			case labelled(r, s):
				b.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555"/>`+"\n", x-5, y, x, y)
				b.p(`<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", x-8, y, layerName(s.Layer))
			case layerStep > 1 && s.Layer%5 == 0:
				b.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999"/>`+"\n", x-3, y, x, y)
			}
		}
	}

	// Left panel: per group a column of bars, each on its own scale (the
	// groups' importances differ by orders of magnitude).
	x0 := float64(margin + labelW)
	b.p(`<text x="%.1f" y="%.1f" font-weight="bold">Mean importance per layer</text>`+"\n", float64(margin), y0-28)
	// Bands of layerStep rows, alternately shaded, guide the eye along a row.
	for r, s := range layers {
		if s.Layer >= 0 && (s.Layer/layerStep)%2 == 1 {
			b.p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.2f" fill="#f2f2f2"/>`+"\n", x0, rowY(r), barsW, rowH)
		}
	}
	layerAxis(x0)
	for gi, g := range groups {
		cx := x0 + float64(gi*(colW+colGap))
		top := tops[g]
		if top <= 0 {
			top = 1
		}
		step := niceStep(top, 4)
		axisTop := math.Ceil(top/step) * step
		scale := (colW - 4) / axisTop
		b.p(`<text x="%.1f" y="%.1f" font-weight="bold" fill="%s">%s</text>`+"\n", cx, y0-8, groupColors[g], g)
		// Grid lines at each step; only the ends are labelled, so that
		// the numbers never run into each other.
		for k := 0; float64(k)*step <= axisTop+step/2; k++ {
			v := float64(k) * step
			x := cx + v*scale
			b.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, y0, x, y0+plotH)
		}
		for _, v := range []float64{0, axisTop} {
			anchor := "start"
			if v > 0 {
				anchor = "end"
			}
			x := cx + v*scale
			b.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555"/>`+"\n", x, y0+plotH, x, y0+plotH+4)
			b.p(`<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d" fill="#555">%s</text>`+"\n", x, y0+plotH+16, anchor, small, trimFloat(v))
		}
		for r, s := range layers {
			v := s.Mean[g]
			if math.IsNaN(v) {
				continue
			}
			pad := math.Min(2, rowH/5)
			b.p(`<rect x="%.1f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>layer %s %s: %.4g</title></rect>`+"\n",
				cx, rowY(r)+pad, v*scale, rowH-2*pad, groupColors[g], layerName(s.Layer), g, v)
		}
	}
	b.p(`<text x="%.1f" y="%.1f" fill="#555">mean of the per-column means (input activation²), each column on its own scale</text>`+"\n", x0, y0+plotH+34)
	if nexp == 0 {
		b.p("</svg>\n")
		return b.String()
	}

	// Right panel: the experts' heat map.
	hx := x0 + barsW + gap + labelW
	sc := newLogScale(layers)
	b.p(`<text x="%.1f" y="%.1f" font-weight="bold">%s</text>`+"\n", hx-labelW, y0-28, heatTitle)
	layerAxis(hx)
	for r, s := range layers {
		y := rowY(r)
		if s.Experts == nil {
			if s.Layer >= 0 && rowH >= 8 {
				b.p(`<text x="%.1f" y="%.1f" dominant-baseline="middle" font-size="%d" fill="#999">no experts</text>`+"\n", hx+4, y+rowH/2, min(small, int(rowH)))
			}
			continue
		}
		empty := emptySet(s)
		for j, v := range s.Experts {
			fill, what := heatColor(sc.pos(v)), factorText(v)
			if empty[j] {
				fill, what = noDataColor, "no data"
			}
			b.p(`<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>layer %s expert %d: %s</title></rect>`+"\n",
				hx+float64(j)*cellW, y, cellW+0.05, rowH+0.05, fill, layerName(s.Layer), j, what)
		}
	}
	b.p(`<rect x="%.1f" y="%.1f" width="%.2f" height="%.2f" fill="none" stroke="#999"/>`+"\n", hx, y0, heatW, plotH)
	// Expert axis: each expert or every tenth labelled, ticks every fifth
	// between them.
	for j := 0; j < nexp; j++ {
		x := hx + (float64(j)+0.5)*cellW
		switch {
		case j%expStep == 0:
			b.p(`<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#555"/>`+"\n", x, y0+plotH, x, y0+plotH+5)
			b.p(`<text x="%.2f" y="%.1f" text-anchor="middle" font-size="%d" fill="#555">%d</text>`+"\n", x, y0+plotH+16, small, j)
		case expStep > 1 && j%5 == 0 && cellW*5 >= 6:
			b.p(`<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#999"/>`+"\n", x, y0+plotH, x, y0+plotH+3)
		}
	}
	b.p(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">expert (numbered from 0, as in the model)</text>`+"\n", hx+heatW/2, y0+plotH+34)
	b.p(`<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`+"\n", hx, y0+plotH+axisH, noDataColor)
	b.p(`<text x="%.1f" y="%.1f">no data</text>`+"\n", hx+16, y0+plotH+axisH+10)

	// Colour scale: 1.0x in the middle, the ticks above and their
	// reciprocals below; the ends say when values lie beyond them.
	sx := hx + heatW + 16
	const steps = 64
	for i := 0; i < steps; i++ {
		f := 1 - (float64(i)+0.5)/steps
		b.p(`<rect x="%.1f" y="%.2f" width="14" height="%.2f" fill="%s"/>`+"\n", sx, y0+float64(i)*plotH/steps, plotH/steps+0.3, heatColor(f))
	}
	b.p(`<rect x="%.1f" y="%.1f" width="14" height="%.2f" fill="none" stroke="#999"/>`+"\n", sx, y0, plotH)
	tick := func(v float64, text string) {
		y := y0 + (1-sc.pos(v))*plotH
		b.p(`<line x1="%.1f" y1="%.2f" x2="%.1f" y2="%.2f" stroke="#555"/>`+"\n", sx+14, y, sx+18, y)
		b.p(`<text x="%.1f" y="%.2f" dominant-baseline="middle" font-size="%d" fill="#333">%s</text>`+"\n", sx+20, y, small, text)
	}
	tick(1, "1x")
	for _, f := range sc.ticks() {
		tick(f, factorText(f))
		tick(1/f, factorText(1/f))
	}
	if sc.clipHi {
		b.p(`<text x="%.1f" y="%.1f" font-size="%d" fill="#555">≥ %s</text>`+"\n", sx, y0-4, small, factorText(math.Exp(sc.R)))
	}
	if sc.clipLo {
		b.p(`<text x="%.1f" y="%.1f" font-size="%d" fill="#555">≤ %s</text>`+"\n", sx, y0+plotH+12, small, factorText(math.Exp(-sc.R)))
	}
	b.p("</svg>\n")
	return b.String()
}

// expertSummary is one line about the experts: how many, the range of
// their relative importance and those without data.
func expertSummary(layers []imatrix.LayerSummary) string {
	nexp, nlayers, empty, emptyLayers := 0, 0, 0, 0
	for _, s := range layers {
		if s.Experts == nil {
			continue
		}
		nexp = max(nexp, len(s.Experts))
		nlayers++
		empty += len(s.Empty)
		if len(s.Empty) > 0 {
			emptyLayers++
		}
	}
	lo, hi := expertRange(layers)
	out := fmt.Sprintf("%d experts in each of %d layers, from %s to %s of their layer's average", nexp, nlayers, factorText(lo), factorText(hi))
	switch {
	case empty == 0:
		out += "; every expert has data"
	case empty == 1:
		out += "; 1 expert without data"
	default:
		out += fmt.Sprintf("; %d experts without data in %d layer(s)", empty, emptyLayers)
	}
	return out
}

// trimFloat prints an axis value without trailing zeros.
func trimFloat(v float64) string {
	return fmt.Sprintf("%.4g", v)
}

// svgText makes text from a file (a dataset name, a file name) safe in the
// SVG's XML: control characters and bytes that are not UTF-8, which XML
// 1.0 does not allow even escaped, are written as visible escapes (\x01)
// as on the terminal, then the markup characters are escaped.
func svgText(s string) string {
	return html.EscapeString(cli.EscapeInline(s))
}
