package trellis

import (
	"math"
	"math/rand/v2"
)

// rowKind makes one row of test weights of a kind the reference may treat
// specially. The first sixteen are the recipes of ../shared/golden/stress
// (README there), in order; the rest are edge cases.
type rowKind struct {
	name string
	make func(r *rand.Rand, row []float32)
}

func normal(r *rand.Rand, row []float32, sigma float64) {
	for i := range row {
		row[i] = float32(sigma * r.NormFloat64())
	}
}

func laplace(r *rand.Rand, row []float32, scale float64) {
	for i := range row {
		u := r.Float64() - 0.5
		row[i] = float32(-scale * math.Copysign(math.Log(1-2*math.Abs(u)), u))
	}
}

func fill(row []float32, v float32) {
	for i := range row {
		row[i] = v
	}
}

var rowKinds = []rowKind{
	{"normal", func(r *rand.Rand, row []float32) { normal(r, row, 0.02) }},
	{"student-t", func(r *rand.Rand, row []float32) {
		for i := range row {
			a, b, c := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
			row[i] = float32(0.02 * r.NormFloat64() / math.Sqrt((a*a+b*b+c*c)/3))
		}
	}},
	{"outlier-channels", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i := 0; i < len(row); i += 97 {
			row[i] *= 40
		}
	}},
	{"thirds", func(r *rand.Rand, row []float32) {
		n := len(row) / 3
		fill(row[:n], 0)
		fill(row[n:2*n], 0.05)
		normal(r, row[2*n:], 0.02)
	}},
	{"tiny", func(r *rand.Rand, row []float32) { normal(r, row, 1e-6) }},
	{"large", func(r *rand.Rand, row []float32) { normal(r, row, 10) }},
	{"ternary", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(3)-1) * 0.03
		}
	}},
	{"huge", func(r *rand.Rand, row []float32) { normal(r, row, 1000) }},
	{"scale-jumps", func(r *rand.Rand, row []float32) {
		for o := 0; o < len(row); o += 32 {
			normal(r, row[o:o+32], math.Pow(10, 5*r.Float64()-4))
		}
	}},
	{"one-signed", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i, v := range row {
			row[i] = abs32(v)
		}
	}},
	{"sparse", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i := range row {
			if r.IntN(10) != 0 {
				row[i] = 0
			}
		}
	}},
	{"uniform", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(2*r.Float64() - 1)
		}
	}},
	{"outlier", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		row[r.IntN(len(row))] = 20
	}},
	{"laplace", func(r *rand.Rand, row []float32) { laplace(r, row, 0.02) }},
	{"grid", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(7)-3) * 0.01
		}
	}},
	{"offset", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i := range row {
			row[i] += 0.1
		}
	}},
	{"zero", func(r *rand.Rand, row []float32) { fill(row, 0) }},
	{"constant", func(r *rand.Rand, row []float32) { fill(row, 0.05) }},
	{"constant-negative", func(r *rand.Rand, row []float32) { fill(row, -1e-3) }},
	{"one-value", func(r *rand.Rand, row []float32) {
		fill(row, 0)
		row[r.IntN(len(row))] = 0.7
	}},
	{"one-tiny-value", func(r *rand.Rand, row []float32) {
		fill(row, 0)
		row[r.IntN(len(row))] = -1e-8
	}},
	{"negative-outlier", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		row[r.IntN(len(row))] = -1000
	}},
	{"two-outliers", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		row[r.IntN(len(row))] = 20
		row[r.IntN(len(row))] = -20
	}},
	{"constant-outlier", func(r *rand.Rand, row []float32) {
		fill(row, 0.02)
		row[r.IntN(len(row))] = 20
	}},
	{"tiny-outlier", func(r *rand.Rand, row []float32) {
		normal(r, row, 1e-6)
		row[r.IntN(len(row))] = 1
	}},
	{"1e8", func(r *rand.Rand, row []float32) { normal(r, row, 1e8) }},
	{"1e-8", func(r *rand.Rand, row []float32) { normal(r, row, 1e-8) }},
	{"subnormal", func(r *rand.Rand, row []float32) { normal(r, row, 1e-40) }},
	{"zero-half", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		fill(row[len(row)/2:], 0)
	}},
	{"one-block", func(r *rand.Rand, row []float32) {
		fill(row, 0)
		normal(r, row[64:96], 0.02)
	}},
	{"eighths", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(17)-8) * 0.125
		}
	}},
	{"two-values", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(2*r.IntN(2)-1) * 0.03
		}
	}},
	{"negative", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i, v := range row {
			row[i] = -abs32(v)
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

// makeRow fills row with weights of the given kind, rounded to bf16.
func makeRow(k rowKind, r *rand.Rand, row []float32) {
	k.make(r, row)
	for i, v := range row {
		row[i] = toBF16(v)
	}
}

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
