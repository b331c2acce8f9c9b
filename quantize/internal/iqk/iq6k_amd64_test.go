//go:build amd64 && !purego

package iqk

import (
	"math/rand/v2"
	"testing"
)

// TestIQ6SumsFMAMatchesGo checks the assembly iq6_k block sums against the
// portable ones bit for bit on random blocks and scales, on both grid
// halves, including extreme inputs that hit the clamped table ends.
func TestIQ6SumsFMAMatchesGo(t *testing.T) {
	if !useSumsFMA {
		t.Skip("no AVX2+FMA")
	}
	tables := []struct {
		name string
		tab  *nearestTable
	}{
		{"plain", iq6Plain}, {"shifted", iq6Shifted},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range tables {
		t.Run(tc.name, func(t *testing.T) {
			asm := func(xb, w []float32, id float32, out *[4]float32) {
				iq6SumsFMA(tc.tab, &xb[0], &w[0], len(xb), id, out)
			}
			portable := func(xb, w []float32, id float32) (a, b, c, d float32) {
				return iq6SumsGo(xb, w, tc.tab, id)
			}
			if diff := checkBlockSums(rng, 5000, tc.tab.v0, 12, asm, portable); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}
