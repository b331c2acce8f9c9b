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

// TestNearestThresholds checks the vector lookup's rule (count the
// thresholds at most x, none from 2^31 on) against the table lookup on both
// iq4_kss grid halves: at every threshold and the floats around it, at and
// around every grid point and integer in range, at the ends of float32 and
// on random values of every magnitude.
func TestNearestThresholds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for s := range 2 {
		tab := grid4.half(s == 1)
		thr := nearestThresholds(tab)
		count := func(x float32) int {
			if !(x < 2147483648) {
				return 0
			}
			n := 0
			for _, v := range thr {
				if x >= v {
					n++
				}
			}
			return n
		}
		xs := append(thr[:], tab.vals[:16]...)
		for i := -300; i <= 300; i++ {
			xs = append(xs, float32(i), float32(i)+0.5)
		}
		xs = append(xs, 2147483520, 2147483648, -2147483648, -2147483904, 1e30, -1e30, 0,
			float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.SmallestNonzeroFloat32)
		for range 200000 {
			xs = append(xs, float32(rng.NormFloat64()*math.Pow(10, rng.Float64()*12-4)))
		}
		for _, x := range xs {
			if math.IsNaN(float64(x)) {
				continue
			}
			o := floatOrder(x)
			for d := int64(-3); d <= 3; d++ {
				y := orderFloat(o + d)
				if got, want := count(y), tab.best(y); got != want {
					t.Fatalf("half %d: x %v (bits %#x): thresholds give %d, the table %d", s, y, math.Float32bits(y), got, want)
				}
			}
		}
		if got, want := count(float32(math.NaN())), tab.best(float32(math.NaN())); got != want {
			t.Fatalf("half %d: NaN: thresholds give %d, the table %d", s, got, want)
		}
	}
}
