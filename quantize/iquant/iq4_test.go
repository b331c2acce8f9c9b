package iquant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/formats"
)

// bestIndexIQ4NLBranchy is the direct port of best_index_iq4nl, kept as the
// reference for the table-driven bestIndexIQ4NL.
func bestIndexIQ4NLBranchy(x float32) int {
	ix := int(x) - int(iq4Values[0])
	if ix < 0 || ix >= len(formats.IQ4NLIndex) {
		if ix < 0 {
			return 0
		}
		return 15
	}
	l := int(formats.IQ4NLIndex[ix])
	if l < 16 {
		return l
	}
	if x-float32(iq4Values[l-16]) < float32(iq4Values[l-15])-x {
		return l - 16
	}
	return l - 15
}

func TestBestIndexIQ4NLMatchesReference(t *testing.T) {
	check := func(x float32) {
		t.Helper()
		if got, want := bestIndexIQ4NL(x), bestIndexIQ4NLBranchy(x); got != want {
			t.Fatalf("bestIndexIQ4NL(%v) = %d, want %d", x, got, want)
		}
	}
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 127, -127, 113, 114, 120, -128, -200, 500,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32}
	for _, x := range special {
		check(x)
	}
	// Every level midpoint and its float32 neighbours.
	for i := 0; i+1 < len(iq4Values); i++ {
		mid := (float32(iq4Values[i]) + float32(iq4Values[i+1])) / 2
		for _, x := range []float32{mid, math.Nextafter32(mid, -200), math.Nextafter32(mid, 200)} {
			check(x)
		}
	}
	// Every float32 on a fine grid across the table range.
	for x := float32(-140); x < 140; x += 1.0 / 64 {
		check(x)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		check(float32(r.NormFloat64() * 60))
	}
}

func TestIQ4SumsFMAMatchesGo(t *testing.T) {
	if !useIQ4SumsFMA {
		t.Skip("no FMA kernel on this build or CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	var weight, xb [32]float32
	var L [32]uint8
	for n := range 200000 {
		for j := range xb {
			xb[j] = float32(r.NormFloat64())
			weight[j] = xb[j] * xb[j]
			if n%2 == 1 {
				weight[j] = float32(r.Float64())
			}
			if n%4 == 3 { // coarse values make float32 ties likely
				xb[j] = float32(r.IntN(64)-32) / 8
				weight[j] = float32(r.IntN(8)) / 4
			}
			L[j] = uint8(r.IntN(16))
		}
		gotQX, gotQ2 := iq4SumsFMA(&weight[0], &xb[0], &L, &iq4ValuesF)
		wantQX, wantQ2 := iq4SumsGo(weight[:], xb[:], &L)
		if math.Float32bits(gotQX) != math.Float32bits(wantQX) || math.Float32bits(gotQ2) != math.Float32bits(wantQ2) {
			t.Fatalf("case %d: iq4SumsFMA = %v, %v; iq4SumsGo = %v, %v", n, gotQX, gotQ2, wantQX, wantQ2)
		}
	}
}

func TestIQ4LevelsAVX2MatchesGo(t *testing.T) {
	if !useIQ4SumsFMA {
		t.Skip("no AVX2 kernel on this build or CPU")
	}
	r := rand.New(rand.NewPCG(5, 6))
	var xb [32]float32
	var got [32]uint8
	for n := range 100000 {
		var amax, max float32
		for j := range xb {
			xb[j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
			if n%3 == 2 { // coarse values land on level midpoints
				xb[j] = float32(r.IntN(512)-256) / 2
			}
			if ax := abs(xb[j]); ax > amax {
				amax, max = ax, xb[j]
			}
		}
		if amax == 0 {
			continue
		}
		edge := int(iq4Values[0])
		if n%2 == 1 {
			edge = int(iq4Values[15])
		}
		id := float32(r.IntN(15)-7+edge) / max
		if n%5 == 4 {
			id = 1 // x itself, including values past the table ends
		}
		iq4LevelsAVX2(&xb[0], id, &got, &iq4Vec)
		for j, v := range xb {
			if want := bestIndexIQ4NL(id * v); int(got[j]) != want {
				t.Fatalf("case %d: level of %v*%v = %d, want %d", n, id, v, got[j], want)
			}
		}
	}
}

// TestIQ4VecTablesMatchIndex checks the comparison form of iq4Levels that
// the AVX2 kernel uses on every table index.
func TestIQ4VecTablesMatchIndex(t *testing.T) {
	for ix, e := range iq4Levels {
		base := 0
		for _, thr := range iq4Vec.thr {
			if int32(ix) > thr[0] {
				base++
			}
		}
		boundary := uint8(0)
		if int32(ix) > iq4Vec.bstart[base] {
			boundary = 1
		}
		if base != int(e.base) || boundary != e.boundary {
			t.Fatalf("ix %d: tables give base %d boundary %d, iq4Levels %d %d", ix, base, boundary, e.base, e.boundary)
		}
	}
}
