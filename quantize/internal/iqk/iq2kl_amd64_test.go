//go:build amd64 && !purego

package iqk

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIQ2KLSumsFMAMatchesGo checks the assembly iq2_kl block sums against
// the portable ones bit for bit on random blocks and scales, including
// extreme inputs that hit the clamped table ends or leave no neighbour
// score below MaxFloat32 (where the assembly must decline).
func TestIQ2KLSumsFMAMatchesGo(t *testing.T) {
	if !useIQ2KLSumsFMA {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	declined := 0
	for iter := 0; iter < 20000; iter++ {
		n := 2 * (1 + rng.IntN(16))
		xb, w, _ := randomBlock(rng, n, float32(math.Pow(10, rng.Float64()*6-3)), 300, true)
		amax, _ := absMax(xb)
		id := randomInverseScale(rng, -63, 12, amax)
		if rng.IntN(2) == 0 {
			id = -id
		}
		var idx [16]int32
		gotQX, gotQ2, ok := iq2klSumsAsm(xb, w, id, &idx)
		if !ok {
			declined++
			continue
		}
		wantQX, wantQ2, wantOK := iq2klSumsGo(xb, w, id)
		if !wantOK {
			t.Fatalf("iter %d: the assembly took a block the portable code finds no neighbour in (id %v, x %v, w %v)", iter, id, xb, w)
		}
		for j := 0; j < n/2; j++ {
			if want, _ := iq2klBest(id, xb[2*j], xb[2*j+1], w[2*j], w[2*j+1]); int(idx[j]) != want {
				t.Fatalf("iter %d pair %d: asm index %d, go %d", iter, j, idx[j], want)
			}
		}
		if math.Float32bits(gotQX) != math.Float32bits(wantQX) || math.Float32bits(gotQ2) != math.Float32bits(wantQ2) {
			t.Fatalf("iter %d: asm (%v, %v), go (%v, %v) (id %v, x %v, w %v)", iter, gotQX, gotQ2, wantQX, wantQ2, id, xb, w)
		}
	}
	if declined > 2000 {
		t.Errorf("assembly declined %d of 20000 blocks", declined)
	}
}

// TestIQ2KLScoreFMAMatchesGo checks the assembly scale-refinement error
// against the portable one bit for bit on random blocks, points and scales.
func TestIQ2KLScoreFMAMatchesGo(t *testing.T) {
	if !useIQ2KLSumsFMA {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	var xb, w [32]float32
	var idx [16]int32
	for iter := 0; iter < 20000; iter++ {
		scale := float32(math.Pow(10, rng.Float64()*8-4))
		for j := range xb {
			xb[j] = float32(rng.NormFloat64()) * scale
			w[j] = float32(rng.ExpFloat64())
		}
		for j := range idx {
			idx[j] = int32(rng.IntN(32))
		}
		dl := scale * float32(rng.NormFloat64()) / 8
		got, want := iq2klScore(xb[:], w[:], &idx, dl), iq2klScoreGo(xb[:], w[:], &idx, dl)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("iter %d: asm %v, go %v (dl %v)", iter, got, want, dl)
		}
	}
}
