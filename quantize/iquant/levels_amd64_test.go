//go:build amd64 && !purego

package iquant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLevelsAndSumsAVX2MatchGo checks levelsOf and sumsOdd with assembly
// against the portable code on finite inputs (the quantizers reject NaN and
// Inf before they run), with level-rounding ties, huge and tiny values.
func TestLevelsAndSumsAVX2MatchGo(t *testing.T) {
	if !useNeighbourAVX2 {
		t.Skip("no AVX2/FMA")
	}
	defer func() { useNeighbourAVX2 = true }()
	r := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 20000; iter++ {
		n := 8 * (1 + r.IntN(4))
		maxL := []int{2, 7}[iter%2]
		x := make([]float32, n)
		w := make([]float32, n)
		id := float32(r.ExpFloat64() * 50)
		for i := range x {
			x[i] = float32(math.Abs(r.NormFloat64()) * 0.02)
			w[i] = float32(r.ExpFloat64())
			switch iter % 5 {
			case 1: // id*x - 1 an odd integer: a rounding tie at 0.5*
				x[i] = float32(2*r.IntN(maxL+2)+2) / id
			case 2:
				x[i] *= 1e30
			case 3:
				x[i] *= 1e-30
				w[i] *= 1e-20
			case 4:
				x[i] = -x[i]
				w[i] = float32(r.NormFloat64())
			}
		}
		var got, want, gotU, wantU [32]int8
		useNeighbourAVX2 = false
		levelsOfUnfused(wantU[:n], id, x, maxL)
		useNeighbourAVX2 = true
		levelsOfUnfused(gotU[:n], id, x, maxL)
		if gotU != wantU {
			t.Fatalf("unfused levels id=%g x=%v: assembly %v, Go %v", id, x, gotU[:n], wantU[:n])
		}
		useNeighbourAVX2 = false
		levelsOf(want[:n], id, x, maxL)
		wqx, wq2 := sumsOdd(w, x, want[:n])
		useNeighbourAVX2 = true
		levelsOf(got[:n], id, x, maxL)
		gqx, gq2 := sumsOdd(w, x, want[:n])
		if got != want {
			t.Fatalf("levels id=%g x=%v: assembly %v, Go %v", id, x, got[:n], want[:n])
		}
		if !sameFloat(gqx, wqx) || !sameFloat(gq2, wq2) {
			t.Fatalf("sums w=%v x=%v L=%v: assembly %g %g, Go %g %g", w, x, want[:n], gqx, gq2, wqx, wq2)
		}
	}
}
