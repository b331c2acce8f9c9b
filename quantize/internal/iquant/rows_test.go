package iquant

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gquant/gquant/quantize/internal/stressrows"
)

// rowKinds are rows of test weights of kinds the reference may treat
// specially: the sixteen recipes of the stress sets, then edge cases: all
// zero, constant, one non-zero value, huge and tiny magnitudes, values on
// the rounding boundaries of the level searches (left in float32, F32, where
// the point is exact float32 values: ties, thresholds).
var rowKinds = slices.Concat(stressrows.Stress, []stressrows.Kind{
	{Name: "zero", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 0) }},
	{Name: "negative-zero", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, float32(math.Copysign(0, -1))) }},
	{Name: "constant", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 0.05) }},
	{Name: "constant-negative", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, -1e-3) }},
	{Name: "one-value", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		row[r.IntN(len(row))] = 0.7
	}},
	{Name: "one-value-per-block", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		for o := 0; o < len(row); o += 32 {
			row[o+r.IntN(32)] = float32(0.02 * r.NormFloat64())
		}
	}},
	{Name: "two-opposite-per-block", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		for o := 0; o < len(row); o += 32 {
			row[o+3], row[o+20] = -0.04, 0.04
		}
	}},
	{Name: "1e8", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e8) }},
	{Name: "1e-12", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-12) }},
	{Name: "subnormal", F32: true, Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-40) }},
	{Name: "max-at-eps", F32: true, Make: func(r *rand.Rand, row []float32) {
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
	{Name: "half-grid", Make: func(r *rand.Rand, row []float32) {
		// The largest magnitude 7.5: the first inverse scales are exact
		// and values half-way between levels are rounding ties.
		for i := range row {
			row[i] = float32(r.IntN(16)-8) + 0.5
		}
		for o := 0; o < len(row); o += 16 {
			row[o] = 7.5
		}
	}},
	{Name: "integer-grid", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(16) - 8)
		}
	}},
	{Name: "odd-grid", Make: func(r *rand.Rand, row []float32) {
		// Values on the odd levels 2l+1 the grids store, largest 5 or 7.
		for i := range row {
			row[i] = float32(2*r.IntN(4)+1) * float32(1-2*r.IntN(2))
		}
	}},
	{Name: "even-grid", Make: func(r *rand.Rand, row []float32) {
		// Values half-way between the odd levels: ties in every search.
		for i := range row {
			row[i] = float32(2*r.IntN(4)) * float32(1-2*r.IntN(2))
		}
	}},
	{Name: "ramp", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(i%32) - 15.5
		}
	}},
	{Name: "zero-blocks", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		for o := 0; o < len(row); o += 64 {
			stressrows.Fill(row[o:o+32], 0)
		}
	}},
	{Name: "zero-half", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		stressrows.Fill(row[len(row)/2:], 0)
	}},
	{Name: "loud-block", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 1e-8)
		stressrows.Normal(r, row[32:64], 1)
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
	{Name: "one-signed-sparse", Make: func(r *rand.Rand, row []float32) {
		stressrows.Fill(row, 0)
		for i := range row {
			if r.IntN(8) == 0 {
				row[i] = abs(float32(0.02 * r.NormFloat64()))
			}
		}
	}},
	{Name: "constant-large", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 7) }},
	{Name: "positive-one-negative", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = abs(float32(0.02*r.NormFloat64())) + 0.01
			if i%32 == 17 {
				row[i] = -0.001
			}
		}
	}},
})

// makeImatrix returns an importance vector of cols weights (a multiple of
// 512): exp(1.5 N(0,1)) as in the stress sets, every 53rd weight exactly 0,
// and with zeroBlocks whole blocks of zeros: columns 64..95 (a block of 32)
// and 272..287 (a block of 16).
func makeImatrix(r *rand.Rand, cols int, zeroBlocks bool) []float32 {
	w := make([]float32, cols)
	for i := range w {
		w[i] = stressrows.ToBF16(float32(math.Exp(1.5 * r.NormFloat64())))
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
func kindByName(name string) stressrows.Kind {
	for _, k := range rowKinds {
		if k.Name == name {
			return k
		}
	}
	panic("iquant: no row kind " + name)
}
