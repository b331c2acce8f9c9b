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
		var got, want, wantU [32]int8
		for i, v := range x {
			wantU[i] = levelOfUnfused(id, v, maxL)
		}
		if n >= 16 {
			var gotT, wantT [16]int8
			useNeighbourAVX2 = false
			levelsOfIQ2STrial(wantT[:], id, x, maxL)
			useNeighbourAVX2 = true
			levelsOfIQ2STrial(gotT[:], id, x, maxL)
			if gotT != wantT || [8]int8(wantT[:8]) != [8]int8(wantU[:8]) {
				t.Fatalf("iq2_s trial levels id=%g x=%v: assembly %v, Go %v", id, x[:16], gotT, wantT)
			}
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

// TestSumsOddTrialsMatchesSumsOdd checks the one-trial-per-lane sums
// against sumsOddFMA row by row, with coarse values and weights that make
// float32 ties likely.
func TestSumsOddTrialsMatchesSumsOdd(t *testing.T) {
	if !useNeighbourAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(11, 12))
	var weight, xval [32]float32
	var rows, cols [32][32]int8
	for n := range 3000 {
		for j := range xval {
			xval[j] = float32(r.NormFloat64())
			weight[j] = float32(r.ExpFloat64())
			if n%3 == 1 {
				xval[j] = float32(r.IntN(64)) / 8
				weight[j] = float32(r.IntN(8)) / 4
			}
		}
		for tr := range rows {
			for j := range rows[tr] {
				rows[tr][j] = int8(r.IntN(8))
				cols[j][tr] = rows[tr][j]
			}
		}
		var got [64]float32
		var scratch [32][32]int8
		sumsOddTrialsAVX2(&weight[0], &xval[0], &rows, &scratch, &got)
		if scratch != cols {
			t.Fatalf("case %d: transposed levels differ", n)
		}
		for tr := range rows {
			qx, q2 := sumsOddFMA(&weight[0], &xval[0], &rows[tr][0], 32)
			if math.Float32bits(got[tr]) != math.Float32bits(qx) || math.Float32bits(got[32+tr]) != math.Float32bits(q2) {
				t.Fatalf("case %d trial %d: (%v, %v), want (%v, %v)", n, tr, got[tr], got[32+tr], qx, q2)
			}
		}
	}
}
