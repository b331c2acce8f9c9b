package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestImatrixWeightsAgrees holds ImatrixWeights' AVX2 form to its portable
// loop bit for bit, over magnitudes from subnormal to huge, zero weights and
// values, and non-finite values, weights and sigma2.
func TestImatrixWeightsAgrees(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(31, 37))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38, -3e38, 1e-30, 1e-45}
	for iter := 0; iter < 20000; iter++ {
		n := []int{8, 16, 32, 256}[r.IntN(4)]
		mag := math.Pow(10, float64(r.IntN(80)-45))
		x, qw := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * mag)
			qw[i] = float32(r.ExpFloat64() * math.Pow(10, float64(r.IntN(20)-10)))
			switch r.IntN(20) {
			case 0:
				x[i], qw[i] = 0, 0
			case 1:
				x[i] = specials[r.IntN(len(specials))]
			case 2:
				qw[i] = specials[r.IntN(len(specials))]
			}
		}
		sigma2 := float32(r.Float64() * mag * mag)
		switch iter % 50 {
		case 0:
			sigma2 = 0
		case 1:
			sigma2 = specials[r.IntN(len(specials))]
		}
		got, want := make([]float32, n), make([]float32, n)
		ImatrixWeights(got, x, qw, sigma2, true)
		ImatrixWeights(want, x, qw, sigma2, false)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("iter %d i %d: x %g qw %g sigma2 %g: asm %g, portable %g", iter, i, x[i], qw[i], sigma2, got[i], want[i])
			}
		}
	}
}

// SigmaWeights' assembly gives FMA32's bits, for the values of
// TestImatrixWeightsAgrees.
func TestSigmaWeightsAgrees(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(41, 43))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38, -3e38, 1e-30, 1e-45}
	for iter := 0; iter < 20000; iter++ {
		n := []int{8, 16, 32, 256}[r.IntN(4)]
		mag := math.Pow(10, float64(r.IntN(80)-45))
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * mag)
			if r.IntN(20) == 0 {
				x[i] = specials[r.IntN(len(specials))]
			}
		}
		c := float32(r.Float64() * mag * mag)
		switch iter % 50 {
		case 0:
			c = 0
		case 1:
			c = specials[r.IntN(len(specials))]
		}
		got, want := make([]float32, n), make([]float32, n)
		SigmaWeights(got, x, c, true)
		SigmaWeights(want, x, c, false)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("iter %d i %d: x %g c %g: asm %g, portable %g", iter, i, x[i], c, got[i], want[i])
			}
		}
	}
}
