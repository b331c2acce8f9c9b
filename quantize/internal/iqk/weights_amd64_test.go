//go:build amd64 && !purego

package iqk

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWeightsAVX2MatchesGo checks the assembly importance weights against
// the portable loop bit for bit, over magnitudes from subnormal to huge.
func TestWeightsAVX2MatchesGo(t *testing.T) {
	if !useWeightsAVX2 {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(31, 37))
	x, qw := make([]float32, 32), make([]float32, 32)
	got, want := make([]float32, 32), make([]float32, 32)
	for iter := range 20000 {
		mag := math.Pow(10, float64(rng.IntN(80)-45))
		for j := range x {
			x[j] = float32(rng.NormFloat64() * mag)
			qw[j] = float32(rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
			if rng.IntN(9) == 0 {
				x[j], qw[j] = 0, 0
			}
		}
		sigma2 := float32(rng.Float64() * mag * mag)
		if iter%5 == 0 {
			sigma2 = 0
		}
		n := 16 + 16*(iter%2)
		weightsAVX2(&got[0], &x[0], &qw[0], n, sigma2)
		useWeightsAVX2 = false
		blockWeights(want[:n], x[:n], qw[:n], sigma2, nil)
		useWeightsAVX2 = true
		for j := 0; j < n; j++ {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("iter %d j %d: x=%g qw=%g sigma2=%g: asm %g, go %g", iter, j, x[j], qw[j], sigma2, got[j], want[j])
			}
		}
	}
}

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
