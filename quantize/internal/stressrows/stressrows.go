// Package stressrows holds the stress sets' row recipes and the manifest
// format of the packages' reference cases, for the kernel packages' tests;
// it is imported only by tests.
//
// The recipes draw from math/rand/v2 and use math.Log and math.Pow, as they
// did when the packages' testdata/refcases were made: a change to the order
// of the draws or to an expression changes the rows those sets were made
// from. Package testrows draws the same sixteen kinds with integer draws and
// rounded float64 arithmetic only, so that its rows are the same on every
// platform; these stay as they are because the refcases' inputs (stored in
// testdata) and the property tests' thresholds were made with them.
package stressrows

import (
	"math"
	"math/rand/v2"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// A Kind makes one row of test weights of a kind the reference may treat
// specially.
type Kind struct {
	Name string
	Make func(r *rand.Rand, row []float32)
	// F32 keeps the row as Make leaves it, for rows whose point is their
	// float32 values (ties, thresholds, products that bf16 inputs would
	// make exact); MakeRow rounds the others to bf16.
	F32 bool
}

// Stress are the sixteen recipes of ../shared/golden/stress (README there),
// in order. Rows are a multiple of 32 values long.
var Stress = []Kind{
	{Name: "normal", Make: func(r *rand.Rand, row []float32) { Normal(r, row, 0.02) }},
	{Name: "student-t", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			a, b, c := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
			row[i] = float32(0.02 * r.NormFloat64() / math.Sqrt((a*a+b*b+c*c)/3))
		}
	}},
	{Name: "outlier-channels", Make: func(r *rand.Rand, row []float32) {
		Normal(r, row, 0.02)
		for i := 0; i < len(row); i += 97 {
			row[i] *= 40
		}
	}},
	{Name: "thirds", Make: func(r *rand.Rand, row []float32) {
		n := len(row) / 3
		Fill(row[:n], 0)
		Fill(row[n:2*n], 0.05)
		Normal(r, row[2*n:], 0.02)
	}},
	{Name: "tiny", Make: func(r *rand.Rand, row []float32) { Normal(r, row, 1e-6) }},
	{Name: "large", Make: func(r *rand.Rand, row []float32) { Normal(r, row, 10) }},
	{Name: "ternary", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(3)-1) * 0.03
		}
	}},
	{Name: "huge", Make: func(r *rand.Rand, row []float32) { Normal(r, row, 1000) }},
	{Name: "scale-jumps", Make: func(r *rand.Rand, row []float32) {
		for o := 0; o < len(row); o += 32 {
			Normal(r, row[o:o+32], math.Pow(10, 5*r.Float64()-4))
		}
	}},
	{Name: "one-signed", Make: func(r *rand.Rand, row []float32) {
		Normal(r, row, 0.02)
		for i, v := range row {
			row[i] = kernel.Abs32(v)
		}
	}},
	{Name: "sparse", Make: func(r *rand.Rand, row []float32) {
		Normal(r, row, 0.02)
		for i := range row {
			if r.IntN(10) != 0 {
				row[i] = 0
			}
		}
	}},
	{Name: "uniform", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(2*r.Float64() - 1)
		}
	}},
	{Name: "outlier", Make: func(r *rand.Rand, row []float32) {
		Normal(r, row, 0.02)
		row[r.IntN(len(row))] = 20
	}},
	{Name: "laplace", Make: func(r *rand.Rand, row []float32) { Laplace(r, row, 0.02) }},
	{Name: "grid", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(7)-3) * 0.01
		}
	}},
	{Name: "offset", Make: func(r *rand.Rand, row []float32) {
		Normal(r, row, 0.02)
		for i := range row {
			row[i] += 0.1
		}
	}},
}

// Normal fills row with draws of N(0, sigma^2).
func Normal(r *rand.Rand, row []float32, sigma float64) {
	for i := range row {
		row[i] = float32(sigma * r.NormFloat64())
	}
}

// Laplace fills row with draws of a Laplace distribution of the given scale.
func Laplace(r *rand.Rand, row []float32, scale float64) {
	for i := range row {
		u := r.Float64() - 0.5
		row[i] = float32(-scale * math.Copysign(math.Log(1-2*math.Abs(u)), u))
	}
}

// Fill sets every value of row to v.
func Fill(row []float32, v float32) {
	for i := range row {
		row[i] = v
	}
}

// ToBF16 rounds v to the nearest bfloat16 (ties to even), as the weights of
// a bf16 model are and as the stress sets' inputs were. A NaN stays a NaN
// (quiet): rounding its payload could carry into the exponent.
func ToBF16(v float32) float32 {
	b := math.Float32bits(v)
	if b&0x7fffffff > 0x7f800000 {
		return math.Float32frombits((b | 0x400000) &^ 0xffff)
	}
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}

// MakeRow fills row with kind k and, unless k.F32 is set, rounds it to bf16.
func MakeRow(k Kind, r *rand.Rand, row []float32) {
	k.Make(r, row)
	if k.F32 {
		return
	}
	for i, v := range row {
		row[i] = ToBF16(v)
	}
}
