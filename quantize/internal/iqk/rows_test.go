package iqk

import (
	"math"
	"math/rand/v2"

	"github.com/gquant/gquant/internal/tables"
)

// rowKind makes one row of test weights of a kind the reference may treat
// specially. The first sixteen are the recipes of ../shared/golden/stress
// (README there), in order; the rest are edge cases. Rows are rounded to
// bf16, as a bf16 model's weights are, unless f32 is set: products of bf16
// values are exact in float32, so only f32 rows show where the reference
// rounds a product before adding it (no FMA) and where it does not.
type rowKind struct {
	name string
	f32  bool
	make func(r *rand.Rand, row []float32)
}

func normal(r *rand.Rand, row []float32, sigma float64) {
	for i := range row {
		row[i] = float32(sigma * r.NormFloat64())
	}
}

func fill(row []float32, v float32) {
	for i := range row {
		row[i] = v
	}
}

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

var rowKinds = []rowKind{
	{name: "normal", make: func(r *rand.Rand, row []float32) { normal(r, row, 0.02) }},
	{name: "student-t", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			a, b, c := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
			row[i] = float32(0.02 * r.NormFloat64() / math.Sqrt((a*a+b*b+c*c)/3))
		}
	}},
	{name: "outlier-channels", make: func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i := 0; i < len(row); i += 97 {
			row[i] *= 40
		}
	}},
	{name: "thirds", make: func(r *rand.Rand, row []float32) {
		n := len(row) / 3
		fill(row[:n], 0)
		fill(row[n:2*n], 0.05)
		normal(r, row[2*n:], 0.02)
	}},
	{name: "tiny", make: func(r *rand.Rand, row []float32) { normal(r, row, 1e-6) }},
	{name: "large", make: func(r *rand.Rand, row []float32) { normal(r, row, 10) }},
	{name: "ternary", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(3)-1) * 0.03
		}
	}},
	{name: "huge", make: func(r *rand.Rand, row []float32) { normal(r, row, 1000) }},
	{name: "scale-jumps", make: func(r *rand.Rand, row []float32) {
		for o := 0; o < len(row); o += 32 {
			normal(r, row[o:o+32], math.Pow(10, 5*r.Float64()-4))
		}
	}},
	{name: "one-signed", make: func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i, v := range row {
			row[i] = abs32(v)
		}
	}},
	{name: "sparse", make: func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i := range row {
			if r.IntN(10) != 0 {
				row[i] = 0
			}
		}
	}},
	{name: "uniform", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(2*r.Float64() - 1)
		}
	}},
	{name: "outlier", make: func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		row[r.IntN(len(row))] = 20
	}},
	{name: "laplace", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			u := r.Float64() - 0.5
			row[i] = float32(-0.02 * math.Copysign(math.Log(1-2*math.Abs(u)), u))
		}
	}},
	{name: "grid", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(7)-3) * 0.01
		}
	}},
	{name: "offset", make: func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i := range row {
			row[i] += 0.1
		}
	}},
	{name: "zero", make: func(r *rand.Rand, row []float32) { fill(row, 0) }},
	{name: "constant", make: func(r *rand.Rand, row []float32) { fill(row, 0.05) }},
	{name: "constant-f32", f32: true, make: func(r *rand.Rand, row []float32) { fill(row, 0.05) }},
	{name: "constant-negative", make: func(r *rand.Rand, row []float32) { fill(row, -3) }},
	{name: "one-value", make: func(r *rand.Rand, row []float32) {
		fill(row, 0)
		row[r.IntN(len(row))] = 0.7
	}},
	{name: "one-tiny-value", make: func(r *rand.Rand, row []float32) {
		fill(row, 0)
		row[r.IntN(len(row))] = -1e-30
	}},
	{name: "one-value-per-superblock", make: func(r *rand.Rand, row []float32) {
		fill(row, 0)
		for o := 0; o < len(row); o += 256 {
			row[o+r.IntN(256)] = float32(r.NormFloat64())
		}
	}},
	{name: "two-values-per-block", make: func(r *rand.Rand, row []float32) {
		fill(row, 0)
		for o := 0; o < len(row); o += 16 {
			row[o+3], row[o+9] = 0.5, -0.25
		}
	}},
	{name: "signed-max-ties", make: func(r *rand.Rand, row []float32) {
		normal(r, row, 0.1)
		for o := 0; o < len(row); o += 16 {
			row[o+2], row[o+7] = 0.5, -0.5
		}
	}},
	{name: "1e14", make: func(r *rand.Rand, row []float32) { normal(r, row, 1e14) }},
	{name: "1e8-f32", f32: true, make: func(r *rand.Rand, row []float32) { normal(r, row, 1e8) }},
	{name: "1e-20-f32", f32: true, make: func(r *rand.Rand, row []float32) { normal(r, row, 1e-20) }},
	{name: "1e-35", make: func(r *rand.Rand, row []float32) { normal(r, row, 1e-35) }},
	{name: "subnormal", f32: true, make: func(r *rand.Rand, row []float32) { normal(r, row, 1e-40) }},
	{name: "block-scales-1e-8..1e8", f32: true, make: func(r *rand.Rand, row []float32) {
		for o := 0; o < len(row); o += 16 {
			normal(r, row[o:o+16], math.Pow(10, float64((o/16)%17-8)))
		}
	}},
	{name: "zero-first-superblock", make: func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		fill(row[:256], 0)
	}},
	{name: "one-block", make: func(r *rand.Rand, row []float32) {
		fill(row, 0)
		normal(r, row[32:48], 0.02)
	}},
	{name: "integers", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(16) - 8)
		}
	}},
	{name: "halves", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(15)-7) * 0.5
		}
	}},
	{name: "iq2-grid", make: func(r *rand.Rand, row []float32) { gridRow(r, row, tables.IQ2NLValues[:4], 0.01, false) }},
	{name: "iq2-midpoints", make: func(r *rand.Rand, row []float32) { gridRow(r, row, tables.IQ2NLValues[:4], 0.01, true) }},
	{name: "iq4-grid", make: func(r *rand.Rand, row []float32) { gridRow(r, row, tables.IQ4KValues[:16], 0.001, false) }},
	{name: "iq4-midpoints", make: func(r *rand.Rand, row []float32) { gridRow(r, row, tables.IQ4KValues[:16], 0.001, true) }},
	{name: "alternating", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(1-2*(i%2)) * 0.5
		}
	}},
	{name: "ramp", make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(i%256-128) / 128
		}
	}},
	{name: "normal-f32", f32: true, make: func(r *rand.Rand, row []float32) { normal(r, row, 0.02) }},
	{name: "uniform-f32", f32: true, make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(2*r.Float64() - 1)
		}
	}},
}

// toBF16 rounds v to the nearest bfloat16 (ties to even), as the weights of
// a bf16 model are and as the stress sets' inputs were.
func toBF16(v float32) float32 {
	b := math.Float32bits(v)
	b = (b + 0x7fff + (b>>16)&1) &^ 0xffff
	return math.Float32frombits(b)
}

// makeRow fills row (a multiple of 256 values) with weights of kind k.
func makeRow(k rowKind, r *rand.Rand, row []float32) {
	k.make(r, row)
	if k.f32 {
		return
	}
	for i, v := range row {
		row[i] = toBF16(v)
	}
}

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
