//go:build amd64 && !purego

package iqk

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIQ2KLLanesMatchesGo checks the lane trial sums of iq2_kl against the
// portable iq2klSumsGo bit for bit, trial by trial, on random blocks with
// edge values, and that the lanes decline only where they must.
func TestIQ2KLLanesMatchesGo(t *testing.T) {
	if !useIQ2KLLanes {
		t.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	used := 0
	for iter := 0; iter < 6000; iter++ {
		n := []int{32, 2 * (1 + rng.IntN(16))}[rng.IntN(2)]
		xb, w, _ := randomBlock(rng, n, float32(math.Pow(10, rng.Float64()*30-20)), 200, true)
		amax, maxv := absMax(xb)
		if amax < 1e-16 {
			continue
		}
		var ids [2 * iq2klTrials]float32
		iq2klTrialIDs(&ids, maxv)
		var sums [2][2 * iq2klTrials]float32
		if !iq2klLaneSums(xb, w, &ids, amax, &sums) {
			continue
		}
		used++
		for m, id := range &ids {
			qx, q2, ok := iq2klSumsGo(xb, w, id)
			if !ok || math.Float32bits(qx) != math.Float32bits(sums[0][m]) || math.Float32bits(q2) != math.Float32bits(sums[1][m]) {
				t.Fatalf("iter %d trial %d (id %v): lanes (%v, %v), go (%v, %v); x %v w %v", iter, m, id, sums[0][m], sums[1][m], qx, q2, xb, w)
			}
		}
	}
	if used < 3000 {
		t.Fatalf("lanes applied to only %d blocks", used)
	}
}
