package trellis

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gquant/gquant/quantize/internal/stressrows"
)

// rowKinds are rows of test weights of kinds the reference may treat
// specially: the sixteen recipes of the stress sets, then edge cases.
var rowKinds = slices.Concat(stressrows.Stress, []stressrows.Kind{
	{Name: "zero", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 0) }},
	{Name: "constant", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 0.05) }},
	{Name: "constant-negative", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, -1e-3) }},
	{Name: "one-value", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		row[r.IntN(len(row))] = 0.7
	}},
	{Name: "one-tiny-value", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		row[r.IntN(len(row))] = -1e-8
	}},
	{Name: "negative-outlier", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		row[r.IntN(len(row))] = -1000
	}},
	{Name: "two-outliers", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		row[r.IntN(len(row))] = 20
		row[r.IntN(len(row))] = -20
	}},
	{Name: "constant-outlier", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0.02)
		row[r.IntN(len(row))] = 20
	}},
	{Name: "tiny-outlier", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 1e-6)
		row[r.IntN(len(row))] = 1
	}},
	{Name: "1e8", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e8) }},
	{Name: "1e-8", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-8) }},
	{Name: "subnormal", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-40) }},
	{Name: "zero-half", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		stressrows.Fill(row[len(row)/2:], 0)
	}},
	{Name: "one-block", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		stressrows.Normal(r, row[64:96], 0.02)
	}},
	{Name: "eighths", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(17)-8) * 0.125
		}
	}},
	{Name: "two-values", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(2*r.IntN(2)-1) * 0.03
		}
	}},
	{Name: "negative", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		for i, v := range row {
			row[i] = -abs32(v)
		}
	}},
})

// makeImatrix is an importance vector like the stress sets' (exp(1.5 N(0,1))
// with every 53rd column 0) that is also zero over the whole block 64..95
// and over the two blocks 384..447 where the row is that long.
func makeImatrix(r *rand.Rand, cols int) []float32 {
	w := make([]float32, cols)
	for i := range w {
		w[i] = float32(math.Exp(1.5 * r.NormFloat64()))
		if i%53 == 0 || i >= 64 && i < 96 || i >= 384 && i < 448 {
			w[i] = 0
		}
	}
	return w
}
