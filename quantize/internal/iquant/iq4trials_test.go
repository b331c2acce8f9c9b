package iquant

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestIQ4ThresholdsMatchIndex(t *testing.T) {
	check := func(x float32) {
		t.Helper()
		if got, want := iq4LevelByThresholds(x), bestIndexIQ4NL(x); got != want {
			t.Fatalf("level of %v by thresholds = %d, want %d", x, got, want)
		}
	}
	for k := 1; k <= 15; k++ {
		if !(iq4Thresholds[k] > iq4Thresholds[k-1]) {
			t.Fatalf("thresholds not increasing at %d: %v", k, iq4Thresholds)
		}
		// Every float32 within 4096 steps of each threshold.
		key := floatOrderKey(iq4Thresholds[k])
		for d := int64(-4096); d <= 4096; d++ {
			check(floatFromOrderKey(key + d))
		}
	}
	for x := float32(-300); x < 300; x += 1.0 / 256 {
		check(x)
	}
	// Not beyond 2^31, where int(x) overflows (trial levels stay far below).
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), 1e9, -1e9} {
		check(x)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 1 << 20 {
		check(float32(r.NormFloat64() * 80))
	}
}

// randomIQ4Block fills a sub-block of 32 with inputs like the quantizer's:
// Gaussian values (coarse ones on some blocks, which make float32 ties
// likely), weights x^2 or random, and the 30 trial scales of its maximum.
func randomIQ4Block(r *rand.Rand, n int, xb, weight, ids *[32]float32) {
	var amax, max float32
	for j := range xb {
		xb[j] = float32(r.NormFloat64())
		weight[j] = xb[j] * xb[j]
		if n%2 == 1 {
			weight[j] = float32(r.Float64())
		}
		if n%4 == 3 {
			xb[j] = float32(r.IntN(64)-32) / 8
			weight[j] = float32(r.IntN(8)) / 4
		}
		if n%16 == 5 {
			weight[j] = 0
		}
		if a := abs(xb[j]); a > amax {
			amax, max = a, xb[j]
		}
	}
	if max == 0 {
		max = 1
	}
	*ids = [32]float32{}
	for itry := -7; itry <= 7; itry++ {
		for e, edge := range [2]int{int(iq4Values[0]), int(iq4Values[15])} {
			ids[2*(itry+7)+e] = float32(itry+edge) / max
		}
	}
}

func TestIQ4TrialsMatchGo(t *testing.T) {
	if !useIQ4SumsFMA {
		t.Skip("no AVX2 kernel on this build or CPU")
	}
	r := rand.New(rand.NewPCG(7, 8))
	var xb, weight, ids [32]float32
	for n := range 50000 {
		randomIQ4Block(r, n, &xb, &weight, &ids)
		var got, want [64]float32
		iq4TrialsAVX2(&xb[0], &weight[0], &ids, &iq4Tab, &got)
		iq4TrialSumsGo(xb[:], weight[:], &ids, &want)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("case %d: sum %d = %v, want %v", n, i, got[i], want[i])
			}
		}
	}
}

func TestIQ4DescentStepMatchesGo(t *testing.T) {
	if !useIQ4SumsFMA {
		t.Skip("no AVX2 kernel on this build or CPU")
	}
	r := rand.New(rand.NewPCG(9, 10))
	var xb, weight, ids [32]float32
	var L [32]uint8
	for n := range 200000 {
		randomIQ4Block(r, n, &xb, &weight, &ids)
		d := ids[r.IntN(30)]
		if d != 0 {
			d = 1 / d
		}
		if n%8 == 6 {
			d = float32(r.IntN(16)-8) / 64 // coarse: ties between steps
		}
		for j, v := range xb {
			L[j] = uint8(bestIndexIQ4NL(v / d))
			if n%3 == 1 {
				L[j] = uint8(r.IntN(16))
			}
		}
		gotJ, gotDir := iq4DescentStepAVX2(&xb[0], &weight[0], &L[0], d, &iq4Tab)
		wantJ, wantDir := iq4DescentStepGo(xb[:], weight[:], L[:], d)
		if gotJ != wantJ || (wantJ >= 0 && gotDir != wantDir) {
			t.Fatalf("case %d: step (%d, %d), want (%d, %d)", n, gotJ, gotDir, wantJ, wantDir)
		}
	}
}
