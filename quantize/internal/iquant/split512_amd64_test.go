//go:build amd64 && !purego

package iquant

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// realisticPrefix fills the prefix sums of n sorted Gaussian values with
// positive weights (coarse, tying ones in mode 1, tiny ones in mode 2) the
// way the iq1 block searches build them, and garbage past n.
func realisticPrefix(r *rand.Rand, sx, sw []float32, n, mode int) {
	x := make([]float32, n)
	w := make([]float32, n)
	for j := range x {
		x[j] = float32(r.NormFloat64() * 0.02)
		w[j] = float32(r.ExpFloat64() * 0.05)
		switch mode {
		case 1:
			x[j], w[j] = float32(r.IntN(9)-4)/4, float32(r.IntN(4))
		case 2:
			x[j] *= 1e-6
			w[j] *= 1e-8
		}
	}
	slices.Sort(x)
	sx[0], sw[0] = 0, 0
	for j := range x {
		sx[j+1] = fmaTieFree(w[j], x[j], sx[j])
		sw[j+1] = sw[j] + w[j]
	}
	for j := n + 1; j < len(sx); j++ {
		sx[j] = float32(r.NormFloat64() * 1e30)
		sw[j] = float32(math.NaN())
	}
}

// TestIQ1SSplitSearch512MatchesScan checks the AVX-512 iq1_s split search
// against the portable scores and scan on realistic and adversarial prefix
// sums: where it applies, the same split, shift and scale.
func TestIQ1SSplitSearch512MatchesScan(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512")
	}
	defer func() { useSplitAVX2 = true }()
	r := rand.New(rand.NewPCG(21, 22))
	applied, total := 0, 0
	var byMode [3]int
	var scores [iq1ScoresLen]float32
	for iter := 0; iter < 20000; iter++ {
		var sx, sw [48]float32
		mode := iter % 10
		if mode < 3 {
			realisticPrefix(r, sx[:], sw[:], 32, mode)
		} else {
			randomPrefix(r, sx[:], 32, mode-3)
			randomPrefix(r, sw[:], 32, (mode-3+iter/10)%6)
		}
		var out [iq1sSplitLen]float32
		useSplitAVX2 = false
		iq1sSplitSums(sx[:], sw[:], 32, &out)
		want := splitState{best: -1.1754943508222875e-38, i1: -1, i2: -1, slot: -1}
		splitScan(out[:], 32, 2, &want)
		useSplitAVX2 = true
		got := splitState{best: -1.1754943508222875e-38, i1: -1, i2: -1, slot: -1}
		if mode < 2 {
			total++
		}
		if !iq1sSplitSearch512(sx[:], sw[:], scores[:], &got) {
			continue
		}
		if mode < 3 {
			byMode[mode]++
		}
		if mode < 2 {
			applied++
		}
		if !sameFloat(got.best, want.best) || !sameFloat(got.scale, want.scale) || got.i1 != want.i1 || got.i2 != want.i2 || got.slot != want.slot {
			t.Fatalf("iter %d (mode %d): AVX-512 %+v, scan %+v", iter, mode, got, want)
		}
	}
	t.Logf("applied to %d of %d realistic blocks (by mode, tiny ones last: %v)", applied, total, byMode)
	if applied < total*99/100 {
		t.Errorf("applied to %d of %d realistic blocks", applied, total)
	}
}

// TestIQ1MSplitSearch512MatchesScan is TestIQ1SSplitSearch512MatchesScan
// for iq1_m: two halves of 8 values (prefix sums over the sorted 16, each
// half's terms only), four shift combinations.
func TestIQ1MSplitSearch512MatchesScan(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512")
	}
	defer func() { useSplitAVX2 = true }()
	r := rand.New(rand.NewPCG(23, 24))
	applied, total := 0, 0
	var byMode [3]int
	var scores [iq1ScoresLen]float32
	for iter := 0; iter < 20000; iter++ {
		var sx1, sx2, sw1, sw2 [32]float32
		mode := iter % 10
		if mode < 3 {
			// Sorted values, each in one of the halves.
			var sx, sw [48]float32
			realisticPrefix(r, sx[:], sw[:], 16, mode)
			for j := 1; j <= 16; j++ {
				dx, dw := sx[j]-sx[j-1], sw[j]-sw[j-1]
				var hx, hw float32
				if r.IntN(2) == 0 {
					dx, hx, dw, hw = 0, dx, 0, dw
				}
				sx1[j], sw1[j] = sx1[j-1]+dx, sw1[j-1]+dw
				sx2[j], sw2[j] = sx2[j-1]+hx, sw2[j-1]+hw
			}
			for j := 17; j < 32; j++ {
				sx1[j], sx2[j], sw1[j], sw2[j] = float32(math.NaN()), 1e30, -1, float32(math.Inf(1))
			}
		} else {
			randomPrefix(r, sx1[:], 16, mode-3)
			randomPrefix(r, sx2[:], 16, (mode-2)%6)
			randomPrefix(r, sw1[:], 16, (mode-3+iter/10)%6)
			randomPrefix(r, sw2[:], 16, (mode+iter/10)%6)
		}
		var out [iq1mSplitLen]float32
		useSplitAVX2 = false
		iq1mSplitSums((*[24]float32)(sx1[:24]), (*[24]float32)(sx2[:24]), (*[24]float32)(sw1[:24]), (*[24]float32)(sw2[:24]), &out)
		want := splitState{i1: -1, i2: -1, slot: -1}
		splitScan(out[:], 16, 4, &want)
		useSplitAVX2 = true
		got := splitState{i1: -1, i2: -1, slot: -1}
		if mode < 2 {
			total++
		}
		if !iq1mSplitSearch512(&sx1, &sx2, &sw1, &sw2, scores[:], &got) {
			continue
		}
		if mode < 3 {
			byMode[mode]++
		}
		if mode < 2 {
			applied++
		}
		if !sameFloat(got.best, want.best) || !sameFloat(got.scale, want.scale) || got.i1 != want.i1 || got.i2 != want.i2 || got.slot != want.slot {
			t.Fatalf("iter %d (mode %d): AVX-512 %+v, scan %+v", iter, mode, got, want)
		}
	}
	t.Logf("applied to %d of %d realistic blocks (by mode, tiny ones last: %v)", applied, total, byMode)
	if applied < total*99/100 {
		t.Errorf("applied to %d of %d realistic blocks", applied, total)
	}
}
