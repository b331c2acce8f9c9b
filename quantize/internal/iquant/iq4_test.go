package iquant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/internal/tables"
)

// bestIndexIQ4NLBranchy is the direct port of best_index_iq4nl, kept as the
// reference for the table-driven bestIndexIQ4NL.
func bestIndexIQ4NLBranchy(x float32) int {
	ix := int(x) - int(iq4Values[0])
	if ix < 0 || ix >= len(tables.IQ4NLIndex) {
		if ix < 0 {
			return 0
		}
		return 15
	}
	l := int(tables.IQ4NLIndex[ix])
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
