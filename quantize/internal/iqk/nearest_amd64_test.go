//go:build amd64 && !purego

package iqk

import (
	"math/rand/v2"
	"testing"
)

// TestNearestSumsFMAMatchesGo checks the assembly block sums against the
// portable ones bit for bit on random blocks, scales and every grid half,
// including extreme inputs that hit the clamped table ends.
func TestNearestSumsFMAMatchesGo(t *testing.T) {
	if !useSumsFMA {
		t.Skip("no AVX2+FMA")
	}
	tables := []struct {
		name string
		tab  *nearestTable
	}{
		{"grid3.plain", grid3.plain}, {"grid3.shifted", grid3.shifted},
		{"grid4.plain", grid4.plain}, {"grid4.shifted", grid4.shifted},
		{"grid5.plain", grid5.plain}, {"grid5.shifted", grid5.shifted},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range tables {
		t.Run(tc.name, func(t *testing.T) {
			asm := func(xb, w []float32, id float32, out *[4]float32) {
				nearestSumsFMA(tc.tab, &xb[0], &w[0], len(xb), id, out)
			}
			if diff := checkBlockSums(rng, 3000, float32(tc.tab.base), 40, asm, tc.tab.sumsGo); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}
