//go:build amd64 && !purego

package iqk

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMakeQxQuantsAVX2MatchesGo checks the lane-parallel makeQxQuants
// against the portable one: same scale bits and levels, for the iq2_k and
// iq2_ks shapes, over many magnitudes, with repeated and zero values.
func TestMakeQxQuantsAVX2MatchesGo(t *testing.T) {
	if !useWeightsAVX2 {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(41, 43))
	for iter := range 20000 {
		nmax, n := 8, 16
		if iter%2 == 1 {
			nmax, n = 16, 128
		}
		mag := math.Pow(10, float64(rng.IntN(50)-28))
		x, qw := make([]float32, n), make([]float32, n)
		for j := range x {
			switch rng.IntN(4) {
			case 0:
				x[j] = float32(float64(rng.IntN(7)-3) * mag / 4) // ties, repeats
			default:
				x[j] = float32(rng.NormFloat64() * mag)
			}
			qw[j] = float32(rng.ExpFloat64())
			if rng.IntN(10) == 0 {
				qw[j] = 0
			}
		}
		got, want := make([]int8, n), make([]int8, n)
		dg := makeQxQuants(nmax, x, got, qw)
		useWeightsAVX2 = false
		dw := makeQxQuants(nmax, x, want, qw)
		useWeightsAVX2 = true
		if math.Float32bits(dg) != math.Float32bits(dw) || !slices.Equal(got, want) {
			t.Fatalf("iter %d: asm %g %v, go %g %v", iter, dg, got, dw, want)
		}
	}
}
