package iqk

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIQ2KSChains checks the reorganised loops of the fast iq2_ks search
// against the plain ones they replace, bit for bit: absMax32 against
// absMax (ties, zeros of both signs, infinities, NaNs), sumSquares4
// against sumSquares for every count of superblocks, blockSums8 against
// a sum in order.
func TestIQ2KSChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(79, 83))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), -float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32, 1e-45, -1e-45}
	for iter := range 20000 {
		var x [32]float32
		mag := float32(math.Pow(10, float64(rng.IntN(60)-30)))
		for i := range x {
			switch k := rng.IntN(10); {
			case k == 0:
				x[i] = specials[rng.IntN(len(specials))]
			case k == 1 && i > 0:
				x[i] = -x[rng.IntN(i)] // a tie in |x|
			default:
				x[i] = mag * float32(rng.NormFloat64())
			}
		}
		a, v := absMax32(&x)
		wa, wv := absMax(x[:])
		if math.Float32bits(a) != math.Float32bits(wa) || math.Float32bits(v) != math.Float32bits(wv) {
			t.Fatalf("iter %d: absMax32 %g, %g; absMax %g, %g of %v", iter, a, v, wa, wv, x)
		}
	}
	for n := range 10 {
		x := make([]float32, 256*n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
		}
		sums := make([]float32, n)
		sumSquares4(sums, x)
		for i := range sums {
			if want := sumSquares(x[256*i : 256*(i+1)]); math.Float32bits(sums[i]) != math.Float32bits(want) {
				t.Errorf("%d superblocks: sumSquares4[%d] %g, sumSquares %g", n, i, sums[i], want)
			}
		}
		if n == 0 {
			continue
		}
		var got [8]float32
		blockSums8(&got, (*[256]float32)(x))
		for b := range got {
			var want float32
			for _, w := range x[32*b : 32*(b+1)] {
				want += w
			}
			if math.Float32bits(got[b]) != math.Float32bits(want) {
				t.Errorf("blockSums8[%d] %g, want %g", b, got[b], want)
			}
		}
	}
}
