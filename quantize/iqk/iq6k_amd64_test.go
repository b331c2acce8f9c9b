//go:build amd64 && !purego

package iqk

import (
	"math"
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
			for iter := 0; iter < 5000; iter++ {
				n := 1 + rng.IntN(32)
				xb := make([]float32, n)
				w := make([]float32, n)
				scale := float32(math.Pow(10, rng.Float64()*6-3))
				for j := range xb {
					xb[j] = float32(rng.NormFloat64()) * scale
					w[j] = float32(rng.ExpFloat64())
					switch rng.IntN(40) {
					case 0:
						xb[j] = float32(math.Inf(1 - 2*rng.IntN(2)))
					case 1:
						xb[j] = 3e38
					case 2:
						xb[j] = 0
					}
				}
				maxv := float32(0)
				for _, x := range xb {
					maxv = max(maxv, float32(math.Abs(float64(x))))
				}
				id := (float32(rng.IntN(12)-6) + tc.tab.v0) / maxv
				if rng.IntN(10) == 0 {
					id = float32(rng.NormFloat64() * 1e3)
				}
				var out [4]float32
				iq6SumsFMA(tc.tab, &xb[0], &w[0], n, id, &out)
				a, b, c, d := iq6SumsGo(xb, w, tc.tab, id)
				want := [4]float32{a, b, c, d}
				for k := range out {
					if math.Float32bits(out[k]) != math.Float32bits(want[k]) {
						t.Fatalf("iter %d sum %d: asm %v, go %v (id %v, x %v)", iter, k, out, want, id, xb)
					}
				}
			}
		})
	}
}
