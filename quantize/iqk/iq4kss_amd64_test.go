//go:build amd64 && !purego

package iqk

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/formats"
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
		xb := make([]float32, 32)
		w := make([]float32, 32)
		scale := float32(math.Pow(10, rng.Float64()*8-4))
		hasExtreme := false
		for j := range xb {
			xb[j] = float32(rng.NormFloat64()) * scale
			w[j] = float32(rng.ExpFloat64())
			extreme := true
			switch rng.IntN(400) {
			case 0:
				xb[j] = float32(math.Inf(1 - 2*rng.IntN(2)))
			case 1:
				xb[j] = 3e38
			case 2:
				xb[j] = 0
			case 3:
				w[j] = 0
			case 4:
				w[j] = 1e38
			default:
				extreme = false
			}
			hasExtreme = hasExtreme || extreme
		}
		amax, maxv := absMax(xb)
		if amax == 0 {
			continue
		}
		values := formats.IQ4KValues[:16]
		if rng.IntN(2) == 0 {
			values = formats.IQ4KValues[16:]
		}
		id := float32(rng.IntN(15)-7+int(values[0])) / maxv
		if rng.IntN(10) == 0 {
			id = float32(rng.NormFloat64() * 1e3)
		}
		var gx, gw [32]float32
		iq4kssGatherBlock(&gx, &gw, xb, w)
		a, b, c, d, ok := iq4kssTrialAsm(&gx, &gw, values[0] != formats.IQ4KValues[0], id, 1/id)
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
		for k := range got {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Fatalf("iter %d sum %d: asm %v, go %v (id %v, x %v, w %v)", iter, k, got, want, id, xb, w)
			}
		}
	}
	t.Logf("assembly declined %d of %d blocks (all with extreme values)", declined, iters)
}
