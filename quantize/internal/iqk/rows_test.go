package iqk

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/stressrows"
)

// gridRow fills row with random points of values (scaled), or with the
// midpoints of neighbouring points when mid is set: exact ties for the
// nearest-point searches when a block's scale comes out as the scale used.
func gridRow(r *rand.Rand, row []float32, values []int8, scale float32, mid bool) {
	for i := range row {
		k := r.IntN(len(values) - 1)
		v := float32(values[k])
		if mid {
			v = (v + float32(values[k+1])) / 2
		}
		row[i] = v * scale
	}
}

// rowKinds are rows of test weights of kinds the reference may treat
// specially: the sixteen recipes of the stress sets, then edge cases. Rows
// are rounded to bf16, as a bf16 model's weights are, unless F32 is set:
// products of bf16 values are exact in float32, so only F32 rows show where
// the reference rounds a product before adding it (no FMA) and where it
// does not. Rows are a multiple of 256 values long.
var rowKinds = slices.Concat(stressrows.Stress, []stressrows.Kind{
	{Name: "zero", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 0) }},
	{Name: "constant", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 0.05) }},
	{Name: "constant-f32", F32: true, Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 0.05) }},
	{Name: "constant-negative", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, -3) }},
	{Name: "one-value", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		row[r.IntN(len(row))] = 0.7
	}},
	{Name: "one-tiny-value", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		row[r.IntN(len(row))] = -1e-30
	}},
	{Name: "one-value-per-superblock", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		for o := 0; o < len(row); o += 256 {
			row[o+r.IntN(256)] = float32(r.NormFloat64())
		}
	}},
	{Name: "two-values-per-block", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		for o := 0; o < len(row); o += 16 {
			row[o+3], row[o+9] = 0.5, -0.25
		}
	}},
	{Name: "signed-max-ties", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.1)
		for o := 0; o < len(row); o += 16 {
			row[o+2], row[o+7] = 0.5, -0.5
		}
	}},
	{Name: "1e14", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e14) }},
	{Name: "1e8-f32", F32: true, Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e8) }},
	{Name: "1e-20-f32", F32: true, Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-20) }},
	{Name: "1e-35", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-35) }},
	{Name: "subnormal", F32: true, Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-40) }},
	{Name: "block-scales-1e-8..1e8", F32: true, Make: func(r *rand.Rand, row []float32) {
		for o := 0; o < len(row); o += 16 {
			stressrows.Normal(r, row[o:o+16], math.Pow(10, float64((o/16)%17-8)))
		}
	}},
	{Name: "zero-first-superblock", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		stressrows.Fill(row[:256], 0)
	}},
	{Name: "one-block", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		stressrows.Normal(r, row[32:48], 0.02)
	}},
	{Name: "integers", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(16) - 8)
		}
	}},
	{Name: "halves", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(15)-7) * 0.5
		}
	}},
	{Name: "iq2-grid", Make: func(r *rand.Rand, row []float32) { gridRow(r, row, tables.IQ2NLValues[:4], 0.01, false) }},
	{Name: "iq2-midpoints", Make: func(r *rand.Rand, row []float32) { gridRow(r, row, tables.IQ2NLValues[:4], 0.01, true) }},
	{Name: "iq4-grid", Make: func(r *rand.Rand, row []float32) { gridRow(r, row, tables.IQ4KValues[:16], 0.001, false) }},
	{Name: "iq4-midpoints", Make: func(r *rand.Rand, row []float32) { gridRow(r, row, tables.IQ4KValues[:16], 0.001, true) }},
	{Name: "alternating", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(1-2*(i%2)) * 0.5
		}
	}},
	{Name: "ramp", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(i%256-128) / 128
		}
	}},
	{Name: "normal-f32", F32: true, Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 0.02) }},
	{Name: "uniform-f32", F32: true, Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(2*r.Float64() - 1)
		}
	}},
})

// makeImatrix is an importance vector like the stress sets' (exp(1.5 N(0,1))
// with every 53rd column 0) that is also zero over the whole 32-block
// 64..95, tiny (1e-30) over 160..191 and zero over 384..511 where the row is
// that long: blocks whose weights the reference replaces, whole or in part.
func makeImatrix(r *rand.Rand, cols int) []float32 {
	w := make([]float32, cols)
	for i := range w {
		w[i] = float32(math.Exp(1.5 * r.NormFloat64()))
		switch {
		case i%53 == 0, i >= 64 && i < 96, i >= 384 && i < 512:
			w[i] = 0
		case i >= 160 && i < 192:
			w[i] = 1e-30
		}
	}
	return w
}
