//go:build amd64 && !purego

package iqk

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/internal/tables"
)

// TestIQ4KSSTrialFMAMatchesGo checks the assembly iq4_kss trial against the
// portable one bit for bit on random blocks and scales on both grid halves,
// including extreme inputs (clamped table ends, scores that overflow, where
// the assembly may decline; it must not on ordinary blocks).
func TestIQ4KSSTrialFMAMatchesGo(t *testing.T) {
	if !useIQ4KSSTrialFMA {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	declined := 0
	const iters = 20000
	for iter := 0; iter < iters; iter++ {
		xb, w, hasExtreme := randomBlock(rng, 32, float32(math.Pow(10, rng.Float64()*8-4)), 400, true)
		amax, maxv := absMax(xb)
		if amax == 0 {
			continue
		}
		values := tables.IQ4KValues[:16]
		if rng.IntN(2) == 0 {
			values = tables.IQ4KValues[16:]
		}
		id := randomInverseScale(rng, float32(values[0]), 15, maxv)
		var gx, gw [32]float32
		iq4kssGatherBlock(&gx, &gw, xb, w)
		a, b, c, d, ok := iq4kssTrialAsm(&gx, &gw, values[0] != tables.IQ4KValues[0], id, 1/id)
		if !ok {
			if !hasExtreme {
				t.Fatalf("iter %d: assembly declined an ordinary block (id %v, x %v, w %v)", iter, id, xb, w)
			}
			declined++
			continue
		}
		got := [4]float32{a, b, c, d}
		a, b, c, d = iq4kssTrialGo(xb, w, values, id, iq4kssBlockOK(xb, w))
		want := [4]float32{a, b, c, d}
		if k := firstBitDiff(got[:], want[:]); k >= 0 {
			t.Fatalf("iter %d sum %d: asm %v, go %v (id %v, x %v, w %v)", iter, k, got, want, id, xb, w)
		}
	}
	t.Logf("assembly declined %d of %d blocks (all with extreme values)", declined, iters)
}
