package iquant

import (
	"math"
	"math/rand/v2"
)

// rowKind makes one row of test weights of a kind the reference may treat
// specially. The first sixteen are the recipes of ../shared/golden/stress
// (README there), in order; the rest are edge cases: all zero, constant, one
// non-zero value, huge and tiny magnitudes, values on the rounding
// boundaries of the level searches.
type rowKind struct {
	name string
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

// bf16 rounds v to the nearest bfloat16, ties to even, as the stress sets'
// inputs (a bf16 model's weights) are.
func bf16(v float32) float32 {
	b := math.Float32bits(v)
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
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
			row[i] = abs(v)
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
	{"laplace", func(r *rand.Rand, row []float32) {
		for i := range row {
			u := r.Float64() - 0.5
			row[i] = float32(-0.02 * math.Copysign(math.Log(1-2*math.Abs(u)), u))
		}
	}},
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
	// Edge cases.
	{"zero", func(r *rand.Rand, row []float32) { fill(row, 0) }},
	{"negative-zero", func(r *rand.Rand, row []float32) { fill(row, float32(math.Copysign(0, -1))) }},
	{"constant", func(r *rand.Rand, row []float32) { fill(row, 0.05) }},
	{"constant-negative", func(r *rand.Rand, row []float32) { fill(row, -1e-3) }},
	{"one-value", func(r *rand.Rand, row []float32) {
		fill(row, 0)
		row[r.IntN(len(row))] = 0.7
	}},
	{"one-value-per-block", func(r *rand.Rand, row []float32) {
		fill(row, 0)
		for o := 0; o < len(row); o += 32 {
			row[o+r.IntN(32)] = float32(0.02 * r.NormFloat64())
		}
	}},
	{"two-opposite-per-block", func(r *rand.Rand, row []float32) {
		fill(row, 0)
		for o := 0; o < len(row); o += 32 {
			row[o+3], row[o+20] = -0.04, 0.04
		}
	}},
	{"1e8", func(r *rand.Rand, row []float32) { normal(r, row, 1e8) }},
	{"1e-12", func(r *rand.Rand, row []float32) { normal(r, row, 1e-12) }},
	{"subnormal", func(r *rand.Rand, row []float32) { normal(r, row, 1e-40) }},
	{"max-at-eps", func(r *rand.Rand, row []float32) {
		// Blocks whose largest magnitude is just below, at and just
		// above the reference's group thresholds (1e-15 and 1e-8).
		for o := 0; o < len(row); o += 16 {
			e := []float32{1e-15, 1e-8}[(o/16)%2]
			e = []float32{math.Nextafter32(e, 0), e, math.Nextafter32(e, 1)}[(o/32)%3]
			for i := o; i < o+16; i++ {
				row[i] = e * float32(r.Float64())
			}
			row[o+5] = e
		}
	}},
	{"half-grid", func(r *rand.Rand, row []float32) {
		// The largest magnitude 7.5: the first inverse scales are exact
		// and values half-way between levels are rounding ties.
		for i := range row {
			row[i] = float32(r.IntN(16)-8) + 0.5
		}
		for o := 0; o < len(row); o += 16 {
			row[o] = 7.5
		}
	}},
	{"integer-grid", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(16) - 8)
		}
	}},
	{"odd-grid", func(r *rand.Rand, row []float32) {
		// Values on the odd levels 2l+1 the grids store, largest 5 or 7.
		for i := range row {
			row[i] = float32(2*r.IntN(4)+1) * float32(1-2*r.IntN(2))
		}
	}},
	{"even-grid", func(r *rand.Rand, row []float32) {
		// Values half-way between the odd levels: ties in every search.
		for i := range row {
			row[i] = float32(2*r.IntN(4)) * float32(1-2*r.IntN(2))
		}
	}},
	{"ramp", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(i%32) - 15.5
		}
	}},
	{"zero-blocks", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for o := 0; o < len(row); o += 64 {
			fill(row[o:o+32], 0)
		}
	}},
	{"zero-half", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		fill(row[len(row)/2:], 0)
	}},
	{"loud-block", func(r *rand.Rand, row []float32) {
		normal(r, row, 1e-8)
		normal(r, row[32:64], 1)
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
	{"one-signed-sparse", func(r *rand.Rand, row []float32) {
		fill(row, 0)
		for i := range row {
			if r.IntN(8) == 0 {
				row[i] = abs(float32(0.02 * r.NormFloat64()))
			}
		}
	}},
	{"constant-large", func(r *rand.Rand, row []float32) { fill(row, 7) }},
	{"positive-one-negative", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = abs(float32(0.02*r.NormFloat64())) + 0.01
			if i%32 == 17 {
				row[i] = -0.001
			}
		}
	}},
}

// makeRow fills row with kind k and rounds it to bf16, except the kinds
// whose point is exact float32 values (ties, thresholds).
func makeRow(k rowKind, r *rand.Rand, row []float32) {
	k.make(r, row)
	switch k.name {
	case "max-at-eps", "subnormal":
		return
	}
	for i, v := range row {
		row[i] = bf16(v)
	}
}

// makeImatrix returns an importance vector of cols weights (a multiple of
// 512): exp(1.5 N(0,1)) as in the stress sets, every 53rd weight exactly 0,
// and with zeroBlocks whole blocks of zeros: columns 64..95 (a block of 32)
// and 272..287 (a block of 16).
func makeImatrix(r *rand.Rand, cols int, zeroBlocks bool) []float32 {
	w := make([]float32, cols)
	for i := range w {
		w[i] = bf16(float32(math.Exp(1.5 * r.NormFloat64())))
		if i%53 == 0 || zeroBlocks && (i >= 64 && i < 96 || i >= 272 && i < 288) {
			w[i] = 0
		}
	}
	return w
}

// zeroBlockKinds are the rows of the reference set whose importance vector
// has zero blocks (makeImatrix): rows with and without values there.
var zeroBlockKinds = []string{"normal", "zero-blocks", "sparse", "one-value-per-block", "constant", "tiny", "zero", "large"}

// kindByName returns the row kind called name.
func kindByName(name string) rowKind {
	for _, k := range rowKinds {
		if k.name == name {
			return k
		}
	}
	panic("iquant: no row kind " + name)
}
