//go:build amd64 && !purego

package iquant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sameFloat reports whether a and b have the same bits or are both NaN.
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// checkSplitLanes compares the valid lanes of two split-score layouts with
// per chunk floats per chunk for a block of n values.
func checkSplitLanes(t *testing.T, name string, n, perChunk int, got, want []float32) {
	t.Helper()
	pos := 0
	for i1 := 0; i1 <= n; i1++ {
		for c := i1; c <= n; c += 8 {
			for lane := 0; lane < 8 && c+lane <= n; lane++ {
				for k := lane; k < perChunk; k += 8 {
					if !sameFloat(got[pos+k], want[pos+k]) {
						t.Fatalf("%s: i1=%d i2=%d slot %d: assembly %g (%#x), Go %g (%#x)", name, i1, c+lane, k/8,
							got[pos+k], math.Float32bits(got[pos+k]), want[pos+k], math.Float32bits(want[pos+k]))
					}
				}
			}
			pos += perChunk
		}
	}
	if pos > len(got) {
		t.Fatalf("%s: layout of %d floats, buffer %d", name, pos, len(got))
	}
}

// randomPrefix fills s[0..n] with prefix sums of random terms in one of the
// modes (ties, zeros, huge values, NaN) and s[n+1:] with garbage.
func randomPrefix(r *rand.Rand, s []float32, n int, mode int) {
	s[0] = 0
	for j := 1; j <= n; j++ {
		var v float32
		switch mode {
		case 0:
			v = float32(r.NormFloat64())
		case 1: // small integers: many exact ties and zero differences
			v = float32(r.IntN(5) - 2)
		case 2:
			v = float32(r.ExpFloat64() * 1e-3)
		case 3:
			v = float32(r.NormFloat64() * 1e18)
		case 4:
			v = float32(r.NormFloat64())
			if r.IntN(10) == 0 {
				v = float32(math.NaN())
			}
		case 5: // sums landing on float32 ties after scaling
			v = float32(r.IntN(1<<24)) * 0x1p-20
		}
		s[j] = s[j-1] + v
	}
	for j := n + 1; j < len(s); j++ {
		s[j] = float32(r.NormFloat64() * 1e30)
	}
}

// TestSplitSumsAVX2MatchesGo checks the assembly split scores of iq2_xs,
// iq1_s and iq1_m against the portable ones, bit for bit.
func TestSplitSumsAVX2MatchesGo(t *testing.T) {
	if !useSplitAVX2 {
		t.Skip("no AVX2/FMA")
	}
	defer func() { useSplitAVX2 = true }()
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 3000; iter++ {
		mode := iter % 6
		var sx, sw, sx2, sw2 [24]float32
		randomPrefix(r, sx[:], 16, mode)
		randomPrefix(r, sw[:], 16, mode)
		randomPrefix(r, sx2[:], 16, mode)
		randomPrefix(r, sw2[:], 16, mode)
		var got, want [iq2xsSplitLen]float32
		useSplitAVX2 = false
		iq2xsSplitSums(&sx, &sw, &want)
		useSplitAVX2 = true
		iq2xsSplitSums(&sx, &sw, &got)
		checkSplitLanes(t, "iq2_xs", 16, 16, got[:], want[:])

		var gotM, wantM [iq1mSplitLen]float32
		useSplitAVX2 = false
		iq1mSplitSums(&sx, &sx2, &sw, &sw2, &wantM)
		useSplitAVX2 = true
		iq1mSplitSums(&sx, &sx2, &sw, &sw2, &gotM)
		checkSplitLanes(t, "iq1_m", 16, 64, gotM[:], wantM[:])

		var lx, lw [40]float32
		randomPrefix(r, lx[:], 32, mode)
		randomPrefix(r, lw[:], 32, mode)
		var gotS, wantS [iq1sSplitLen]float32
		useSplitAVX2 = false
		iq1sSplitSums(lx[:], lw[:], 32, &wantS)
		useSplitAVX2 = true
		iq1sSplitSums(lx[:], lw[:], 32, &gotS)
		checkSplitLanes(t, "iq1_s", 32, 32, gotS[:], wantS[:])
	}
	if n := splitChunks(16); n*16 != iq2xsSplitLen || n*64 != iq1mSplitLen {
		t.Errorf("splitChunks(16) = %d does not match the buffer sizes", n)
	}
	if n := splitChunks(32); n*32 != iq1sSplitLen {
		t.Errorf("splitChunks(32) = %d does not match the buffer size", n)
	}
}
