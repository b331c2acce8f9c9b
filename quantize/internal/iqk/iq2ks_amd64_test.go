//go:build amd64 && !purego

package iqk

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/internal/tables"
)

// withIQ2KSPortable runs f with the assembly fit switched off.
func withIQ2KSPortable(t *testing.T, f func()) {
	t.Helper()
	saved := useIQ2KSAVX2
	useIQ2KSAVX2 = false
	defer func() { useIQ2KSAVX2 = saved }()
	f()
}

// randomIQ2KSBlock fills xb with normal values of magnitude mag (between
// 1e-20 and 1e19; every 7th iteration with some zeros) and w with exponential
// weights, and returns mag and the largest magnitude.
func randomIQ2KSBlock(rng *rand.Rand, iter int, xb, w *[32]float32) (mag, amax float32) {
	mag = float32(math.Pow(10, float64(rng.IntN(40)-20)))
	for i := range xb {
		xb[i] = mag * float32(rng.NormFloat64())
		if iter%7 == 0 && i%5 == 0 {
			xb[i] = 0
		}
		w[i] = float32(rng.ExpFloat64())
		amax = max(amax, abs32(xb[i]))
	}
	return mag, amax
}

// TestIQ2KSFitAVX2MatchesGo checks the assembly fit against the portable
// one bit for bit, on random blocks at many scales (including ones where the
// portable code takes its scanning fallback).
func TestIQ2KSFitAVX2MatchesGo(t *testing.T) {
	if !useIQ2KSAVX2 {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	grids := [][]int8{tables.IQ2NLValues[:4], tables.IQ2NLValues[4:]}
	var xb, w [32]float32
	for iter := range 20000 {
		_, amax := randomIQ2KSBlock(rng, iter, &xb, &w)
		d := amax / float32(rng.IntN(30)-15) * float32(1+rng.Float64()/8)
		switch {
		case iter%11 == 0:
			d *= 1e9
		case iter%13 == 0:
			d *= 1e-8 // the portable code's scanning fallback
		}
		values := grids[iter%2]
		var fa, fg iq2ksFitter
		newIQ2KSFitter(&fa, xb[:], w[:], amax)
		okA, dA, sA := fa.fit(d, values, 0)
		var okG bool
		var dG, sG float32
		withIQ2KSPortable(t, func() {
			newIQ2KSFitter(&fg, xb[:], w[:], amax)
			okG, dG, sG = fg.fit(d, values, 0)
		})
		if okA != okG || math.Float32bits(dA) != math.Float32bits(dG) || math.Float32bits(sA) != math.Float32bits(sG) {
			t.Fatalf("iter %d d=%g: asm (%v, %g, %g) != go (%v, %g, %g)", iter, d, okA, dA, sA, okG, dG, sG)
		}
	}
}

// TestIQ2KSRowAVX2MatchesGo checks whole rows, with and without importance
// weights, byte for byte.
func TestIQ2KSRowAVX2MatchesGo(t *testing.T) {
	if !useIQ2KSAVX2 {
		t.Skip("no AVX2+FMA")
	}
	const n = 4096
	rng := rand.New(rand.NewPCG(3, 5))
	x := make([]float32, n)
	qw := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64()) * 0.02
		qw[i] = float32(rng.ExpFloat64())
	}
	size := 2 + n/256*70
	for _, imat := range []bool{false, true} {
		var w []float32
		if imat {
			w = qw
		}
		asm, portable := make([]byte, size), make([]byte, size)
		quantizeIQ2KS(asm, x, w)
		withIQ2KSPortable(t, func() { quantizeIQ2KS(portable, x, w) })
		if !bytes.Equal(asm, portable) {
			t.Fatalf("imat=%v: assembly row differs from portable row", imat)
		}
	}
}

// TestIQ2KSErrorAVX2MatchesGo checks the assembly block error and indices
// against the portable ones bit for bit on random blocks at many scales.
func TestIQ2KSErrorAVX2MatchesGo(t *testing.T) {
	if !useIQ2KSAVX2 {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(9, 12))
	grids := [][]int8{tables.IQ2NLValues[:4], tables.IQ2NLValues[4:]}
	var xb, w [32]float32
	for iter := range 20000 {
		mag, amax := randomIQ2KSBlock(rng, iter, &xb, &w)
		values := grids[iter%2]
		d := amax / float32(values[rng.IntN(4)]) * float32(0.5+rng.Float64())
		if iter%11 == 0 {
			d = mag * float32(math.Pow(10, float64(rng.IntN(16)-8)))
		}
		var gotIdx, wantIdx [32]uint8
		got := iq2ksBlockError(d, xb[:], w[:], values, &gotIdx, amax)
		want := iq2ksBlockErrorGo(d, xb[:], w[:], values, &wantIdx, amax)
		if math.Float32bits(got) != math.Float32bits(want) || gotIdx != wantIdx {
			t.Fatalf("iter %d: asm %v %v, go %v %v (d %v, x %v)", iter, got, gotIdx, want, wantIdx, d, xb)
		}
	}
}

// TestIQ2KSFitsCountMatchesBlend checks the counting fits with their
// vector reduction and pick against the compare-and-blend fits with the
// portable pick, bit for bit, on blocks of many magnitudes below 1e15,
// including values exactly between two scaled grid points (ties of the
// squared distances).
func TestIQ2KSFitsCountMatchesBlend(t *testing.T) {
	if !useIQ2KSAVX2 {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(17, 19))
	var xb, w [32]float32
	var sc iq2ksScratch
	mids := [2][3]float32{{-22, -6, 9}, {-17, -1, 14}}
	for iter := range 20000 {
		mag := float32(math.Pow(10, float64(rng.IntN(29)-14)))
		maxv := mag * float32(1+rng.Float64())
		if rng.IntN(2) == 0 {
			maxv = -maxv
		}
		xb[0] = maxv
		for i := 1; i < len(xb); i++ {
			if rng.IntN(3) == 0 {
				f := 1 + rng.IntN(54)
				g := 0
				if f > 27 {
					g = 1
				}
				xb[i] = maxv / iq2ksTrialDen[f] * mids[g][rng.IntN(3)]
			} else {
				xb[i] = min(max(mag*0.3*float32(rng.NormFloat64()), -abs32(maxv)), abs32(maxv))
			}
			w[i] = float32(rng.ExpFloat64())
		}
		w[0] = float32(rng.ExpFloat64())
		amax, mv := absMax(xb[:])
		if amax < 1e-14 || amax >= 1e15 || mv != maxv {
			t.Fatalf("iter %d: bad block (amax %g, maxv %g, want %g)", iter, amax, mv, maxv)
		}
		iq2ksFitsCountAVX2(&xb[0], &w[0], maxv, &iq2ksTrialDen[0], 28, &iq2ksGrids[0], &sc.raw[0])
		iq2ksFitsCountAVX2(&xb[0], &w[0], maxv, &iq2ksTrialDen[28], 27, &iq2ksGrids[1], &sc.raw[28])
		iq2ksReducePickAVX2(&sc.raw, &sc.picks)
		var params [55][12]float32
		for f := range params {
			g := 0
			if f > 27 {
				g = 1
			}
			d := maxv / iq2ksTrialDen[f]
			for j, v := range tables.IQ2NLValues[4*g : 4*g+4] {
				dv := d * float32(v)
				params[f][j], params[f][4+j], params[f][8+j] = dv, float32(v), -dv
			}
		}
		var out [55][4]float32
		iq2ksFitsAVX2(&xb[0], &w[0], &params[0], 55, &out[0])
		p := &sc.picks
		for f, o := range out {
			ok, d, score := iq2ksPick(o[0], o[1], o[2], o[3])
			if ok != (p.ok[f] != 0) || ok && (math.Float32bits(d) != math.Float32bits(p.bestD[f]) || math.Float32bits(score) != math.Float32bits(p.score[f])) {
				t.Fatalf("iter %d fit %d: counting (%v, %g, %g), blend (%v, %g, %g)", iter, f, p.ok[f] != 0, p.bestD[f], p.score[f], ok, d, score)
			}
		}
	}
}

// TestIQ2KSPickAVX2MatchesGo checks the vector pick against iq2ksPick on
// sums of all signs, zeros and ties.
func TestIQ2KSPickAVX2MatchesGo(t *testing.T) {
	if !useIQ2KSAVX2 {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(23, 29))
	pick := func() float32 {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1:
			return float32(rng.IntN(5) - 2)
		default:
			return float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
		}
	}
	for iter := range 2000 {
		var s iq2ksFitSums
		for f := range s.sumqx1 {
			s.sumqx1[f], s.sumq21[f], s.sumqx2[f], s.sumq22[f] = pick(), pick(), pick(), pick()
			if rng.IntN(4) == 0 {
				s.sumqx2[f], s.sumq22[f] = s.sumqx1[f], s.sumq21[f] // a tie
			}
		}
		var p iq2ksPicks
		iq2ksPickAVX2(&s, &p)
		for f := range s.sumqx1 {
			ok, d, sc := iq2ksPick(s.sumqx1[f], s.sumq21[f], s.sumqx2[f], s.sumq22[f])
			if ok != (p.ok[f] != 0) || ok && (math.Float32bits(d) != math.Float32bits(p.bestD[f]) || math.Float32bits(sc) != math.Float32bits(p.score[f])) {
				t.Fatalf("iter %d fit %d: asm (%v, %g, %g), go (%v, %g, %g)", iter, f, p.ok[f] != 0, p.bestD[f], p.score[f], ok, d, sc)
			}
		}
	}
}
