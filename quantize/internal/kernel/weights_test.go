package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWeightsAgree holds the AVX2 forms of ImatrixWeights and SigmaWeights
// to their portable loops bit for bit, over magnitudes from subnormal to
// huge, zero weights and values, and non-finite values, weights and
// sigma2 (SigmaWeights' constant).
func TestWeightsAgree(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2/FMA")
	}
	for _, tc := range []struct {
		name string
		f    func(w, x, qw []float32, s float32, asm bool)
	}{
		{"ImatrixWeights", ImatrixWeights},
		{"SigmaWeights", func(w, x, _ []float32, s float32, asm bool) { SigmaWeights(w, x, s, asm) }},
	} {
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
			tc.f(got, x, qw, sigma2, true)
			tc.f(want, x, qw, sigma2, false)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s iter %d i %d: x %g qw %g sigma2 %g: asm %g, portable %g", tc.name, iter, i, x[i], qw[i], sigma2, got[i], want[i])
				}
			}
		}
	}
}
