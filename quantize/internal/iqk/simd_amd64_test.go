//go:build amd64 && !purego

package iqk

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The assembly tests of this package run the assembly and the portable code
// on the same random inputs and compare bits; these helpers make the inputs.

// randomBlock returns n values, normal times scale, with exponential weights;
// with odds 1 in odds a value is replaced by an edge case (an infinity, 3e38
// or 0) or, with edgeWeights, its weight by 0 or 1e38. edge reports whether
// any was.
func randomBlock(rng *rand.Rand, n int, scale float32, odds int, edgeWeights bool) (xb, w []float32, edge bool) {
	xb, w = make([]float32, n), make([]float32, n)
	for j := range xb {
		xb[j] = float32(rng.NormFloat64()) * scale
		w[j] = float32(rng.ExpFloat64())
		switch k := rng.IntN(odds); {
		case k == 0:
			xb[j] = float32(math.Inf(1 - 2*rng.IntN(2)))
		case k == 1:
			xb[j] = 3e38
		case k == 2:
			xb[j] = 0
		case k == 3 && edgeWeights:
			w[j] = 0
		case k == 4 && edgeWeights:
			w[j] = 1e38
		default:
			continue
		}
		edge = true
	}
	return xb, w, edge
}

// randomInverseScale returns an inverse block scale near (center ±
// spread/2)/maxv, the range the quantizers try, or one time in ten a wild one.
func randomInverseScale(rng *rand.Rand, center float32, spread int, maxv float32) float32 {
	id := (float32(rng.IntN(spread)-spread/2) + center) / maxv
	if rng.IntN(10) == 0 {
		id = float32(rng.NormFloat64() * 1e3)
	}
	return id
}

// firstBitDiff returns the first index where got and want differ in their
// bits, or -1 when they agree.
func firstBitDiff(got, want []float32) int {
	for k := range got {
		if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
			return k
		}
	}
	return -1
}

// checkBlockSums runs the assembly block sums sumsAsm and their portable twin
// sumsGo over random blocks (with edge values that hit the clamped table
// ends) at inverse scales around center/maxv, and reports the first
// difference in their bits.
func checkBlockSums(rng *rand.Rand, iters int, center float32, spread int,
	sumsAsm func(xb, w []float32, id float32, out *[4]float32),
	sumsGo func(xb, w []float32, id float32) (a, b, c, d float32)) (diff string) {
	for iter := 0; iter < iters; iter++ {
		n := 1 + rng.IntN(32)
		xb, w, _ := randomBlock(rng, n, float32(math.Pow(10, rng.Float64()*6-3)), 40, false)
		amax, _ := absMax(xb)
		id := randomInverseScale(rng, center, spread, amax)
		var out [4]float32
		sumsAsm(xb, w, id, &out)
		a, b, c, d := sumsGo(xb, w, id)
		want := [4]float32{a, b, c, d}
		if k := firstBitDiff(out[:], want[:]); k >= 0 {
			return fmt.Sprintf("iter %d sum %d: asm %v, go %v (id %v, x %v)", iter, k, out, want, id, xb)
		}
	}
	return ""
}
