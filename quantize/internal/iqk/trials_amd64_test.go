//go:build amd64 && !purego

package iqk

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBlockScaleLanesMatchesGo checks blockScale with the lane trials
// (AVX2 and, where the CPU has it, AVX-512) against the one-trial-at-a-time
// search bit for bit, for every grid and search shape the quantizers use,
// on random blocks with edge values.
func TestBlockScaleLanesMatchesGo(t *testing.T) {
	if !useTrialsAVX2 {
		t.Skip("no AVX2+FMA")
	}
	defer func(v bool) { useTrials512 = v }(useTrials512)
	for _, wide := range []bool{false, true} {
		if wide && !hasTrials512 {
			continue
		}
		useTrials512 = wide
		t.Run(map[bool]string{false: "avx2", true: "avx512"}[wide], testBlockScaleLanesMatchesGo)
	}
}

func testBlockScaleLanesMatchesGo(t *testing.T) {
	cases := []struct {
		name       string
		g          *nlGrid
		ntry, step int
		guardFirst bool
	}{
		{"iq3_k", &grid3, 3, 2, true},
		{"iq3_ks", &grid3, 5, 1, true},
		{"iq4_k", &grid4, 7, 1, false},
		{"iq5_k", &grid5, 5, 1, false},
		{"grid4-ntry0", &grid4, 0, 1, false},
		{"grid5-ntry15", &grid5, 15, 1, true},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for iter := 0; iter < 4000; iter++ {
				n := []int{16, 32, 1 + rng.IntN(32)}[rng.IntN(3)]
				scale := float32(math.Pow(10, rng.Float64()*40-30))
				xb, w, _ := randomBlock(rng, n, scale, 60, true)
				amax, maxv := absMax(xb)
				if amax < 1e-16 {
					continue
				}
				d, shifted := tc.g.blockScale(xb, w, tc.ntry, tc.step, maxv, tc.guardFirst)
				wd, wshifted := tc.g.blockScaleGo(xb, w, tc.ntry, tc.step, maxv, tc.guardFirst)
				if math.Float32bits(d) != math.Float32bits(wd) || shifted != wshifted {
					t.Fatalf("iter %d: lanes (%v, %v), go (%v, %v); maxv %v x %v w %v", iter, d, shifted, wd, wshifted, maxv, xb, w)
				}
			}
		})
	}
}
