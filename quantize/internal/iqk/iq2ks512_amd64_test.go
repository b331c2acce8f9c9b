//go:build amd64 && !purego

package iqk

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestIQ2KSFitsCount512MatchesAVX2 checks the AVX-512 counting fits
// against the AVX2 ones, raw sum for raw sum and bit for bit, for every
// count of scales from 1 to 28 (odd counts end in the single-scale tail)
// on random blocks of many magnitudes and adversarial ones: values exactly
// between two scaled grid points (ties), zeros and negative zeros, huge and
// infinite values, zero weights, and denominators that give infinite or
// zero scales. Neither may write past raw[n).
func TestIQ2KSFitsCount512MatchesAVX2(t *testing.T) {
	if !hasIQ2KS512 {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(31, 37))
	mids := [2][3]float32{{-22, -6, 9}, {-17, -1, 14}}
	var xb, w [32]float32
	var den [28]float32
	for iter := range 20000 {
		g := iter % 2
		n := 1 + rng.IntN(28)
		mag := float32(math.Pow(10, float64(rng.IntN(80)-40)))
		maxv := mag * float32(1+rng.Float64())
		if rng.IntN(2) == 0 {
			maxv = -maxv
		}
		for f := range den {
			den[f] = iq2ksTrialDen[(g*28+f)%55]
			switch rng.IntN(40) {
			case 0:
				den[f] = 0 // an infinite scale
			case 1:
				den[f] = float32(math.Inf(1)) // a zero scale
			case 2:
				den[f] = float32(rng.NormFloat64())
			}
		}
		for i := range xb {
			switch k := rng.IntN(12); {
			case k < 3: // a tie between two scaled grid points
				xb[i] = maxv / den[rng.IntN(n)] * mids[g][rng.IntN(3)]
			case k == 3:
				xb[i] = 0
			case k == 4:
				xb[i] = float32(math.Copysign(0, -1))
			case k == 5 && iter%5 == 0:
				xb[i] = float32(rng.NormFloat64()) * 1e37
			case k == 6 && iter%9 == 0:
				xb[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
			default:
				xb[i] = mag * float32(rng.NormFloat64())
			}
			w[i] = float32(rng.ExpFloat64())
			if rng.IntN(8) == 0 {
				w[i] = 0
			}
		}
		if iter%3 == 0 {
			xb[rng.IntN(32)] = maxv
		}
		var got, want [29][4][8]float32
		for f := range got {
			for s := range got[f] {
				for l := range got[f][s] {
					got[f][s][l], want[f][s][l] = 12345, 12345
				}
			}
		}
		iq2ksFitsCount512(&xb[0], &w[0], maxv, &den[0], n, &iq2ksGrids[g], &got[0])
		iq2ksFitsCountAVX2(&xb[0], &w[0], maxv, &den[0], n, &iq2ksGrids[g], &want[0])
		for f := range got {
			for s := range got[f] {
				for l := range got[f][s] {
					if a, b := math.Float32bits(got[f][s][l]), math.Float32bits(want[f][s][l]); a != b {
						t.Fatalf("iter %d (n %d, grid %d, maxv %g) fit %d sum %d lane %d: avx512 %g (%#x), avx2 %g (%#x)",
							iter, n, g, maxv, f, s, l, got[f][s][l], a, want[f][s][l], b)
					}
				}
			}
		}
	}
}

// TestIQ2KSRowLevelsMatchGo quantizes whole iq2_ks rows of many magnitudes
// (the counting fits run below 1e15, the scanning ones above), with and
// without importance weights, at every assembly level, and requires the
// portable code's bytes.
func TestIQ2KSRowLevelsMatchGo(t *testing.T) {
	levels := assemblyModes()
	if len(levels) < 3 {
		t.Skip("no AVX-512")
	}
	const n = 4096
	rng := rand.New(rand.NewPCG(41, 43))
	x := make([]float32, n)
	qw := make([]float32, n)
	size := 2 + n/256*70
	for iter := range 8 {
		scale := math.Pow(10, float64(4*iter-14))
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale)
			if i%17 == 0 {
				x[i] = 0
			}
			qw[i] = float32(rng.ExpFloat64())
		}
		for _, w := range [][]float32{nil, qw} {
			out := make([][]byte, len(levels))
			for i, level := range levels {
				out[i] = make([]byte, size)
				restore := setAssembly(level)
				quantizeIQ2KS(out[i], x, w)
				restore()
			}
			for i, level := range levels[1:] {
				if !bytes.Equal(out[0], out[1+i]) {
					t.Fatalf("scale %g imatrix %v: asm level %d differs from the portable row", scale, w != nil, level)
				}
			}
		}
	}
}
