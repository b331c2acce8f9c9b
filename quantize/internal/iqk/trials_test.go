package iqk

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTrialThresholds checks that nearestTable.best never decreases across
// a truncation slot edge (within a slot it is monotone by construction), so
// counting thresholds is exact, and that counting agrees with best on
// random values and on the values around every threshold and slot edge.
func TestTrialThresholds(t *testing.T) {
	grids := []struct {
		name string
		g    *nlGrid
	}{{"grid3", &grid3}, {"grid4", &grid4}, {"grid5", &grid5}}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, gc := range grids {
		for s, tab := range [2]*nearestTable{gc.g.plain, gc.g.shifted} {
			tt := gc.g.trials[s]
			n := gc.g.n
			check := func(x float32) {
				t.Helper()
				if got, want := tt.countIndex(x, n), tab.best(x); got != want {
					t.Fatalf("%s half %d: x=%v (%#x): counting %d, best %d", gc.name, s, x, math.Float32bits(x), got, want)
				}
			}
			below := func(x float32) float32 { return math.Nextafter32(x, float32(math.Inf(-1))) }
			for b := -400; b <= 400; b++ {
				edge := float32(b)
				if tab.best(below(edge)) > tab.best(edge) {
					t.Fatalf("%s half %d: best decreases at slot edge %d", gc.name, s, b)
				}
				for _, x := range []float32{edge, below(edge), math.Nextafter32(edge, 1e9), edge + 0.5, edge - 0.5} {
					check(x)
				}
			}
			for k := 0; k < n-1; k++ {
				x := tt.th[k][0]
				for i := 0; i < 5; i++ {
					x = below(x)
				}
				for i := 0; i < 10; i++ {
					check(x)
					x = math.Nextafter32(x, float32(math.Inf(1)))
				}
			}
			for i := 0; i < 20000; i++ {
				check(float32(rng.NormFloat64() * 100))
				check(float32(rng.NormFloat64() * 1e-3))
				check(float32((rng.Float64()*2 - 1) * 1e9))
			}
			for _, x := range []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), 1 << 29, -1 << 29, 1e-40, -1e-40} {
				check(x)
			}
		}
	}
}
