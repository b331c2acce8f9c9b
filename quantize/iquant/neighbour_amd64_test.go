//go:build amd64 && !purego

package iquant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBestNeighbourFMAMatchesGo checks the assembly neighbour search against
// the portable one on random data, with inputs built to tie (zero weights,
// points halfway between levels, equal weights), negative weights and NaN.
func TestBestNeighbourFMAMatchesGo(t *testing.T) {
	if !useNeighbourFMA {
		t.Skip("no AVX2/FMA")
	}
	grids := []struct {
		name string
		grid func() *codeGrid
	}{
		{"iq2_xxs", iq2xxsGrid}, {"iq2_xs", iq2xsGrid}, {"iq2_s", iq2sGrid},
		{"iq1_s", iq1sGrid}, {"iq3_xxs", iq3xxsGrid}, {"iq3_s", iq3sGrid},
	}
	modes := []string{"random", "zero-weights", "midpoints", "equal-weights", "negative-weights", "nan"}
	for _, tc := range grids {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.grid()
			r := rand.New(rand.NewPCG(1, uint64(g.dim*len(g.kmap))))
			var offGrid []int
			for u, v := range g.kmap {
				if v < 0 {
					offGrid = append(offGrid, u)
				}
			}
			xval := make([]float32, g.dim)
			weight := make([]float32, g.dim)
			levels := 1 << g.bits
			for iter := 0; iter < 20000; iter++ {
				mode := modes[iter%len(modes)]
				u := offGrid[r.IntN(len(offGrid))]
				scale := float32(r.ExpFloat64() * 0.01)
				for i := range xval {
					xval[i] = float32(r.NormFloat64()) * scale * float32(levels)
					weight[i] = float32(r.ExpFloat64())
					switch mode {
					case "zero-weights":
						weight[i] = 0
					case "midpoints":
						xval[i] = scale * float32(2*r.IntN(levels)+2)
						weight[i] = 1
					case "equal-weights":
						xval[i] = scale * float32(2*r.IntN(levels)+1+r.IntN(3)-1)
						weight[i] = 0.5
					case "negative-weights":
						weight[i] = float32(r.NormFloat64())
					case "nan":
						if r.IntN(4) == 0 {
							xval[i] = float32(math.NaN())
						}
					}
				}
				var diffs, wdiffs [64]float32
				nonNegative := g.neighbourTables(u, xval, weight, scale, &diffs, &wdiffs)
				cands := g.neighboursOf(u)
				want := g.bestNeighbourGo(cands, &diffs, &wdiffs, nonNegative)
				got := -1
				if k := bestNeighbourFMA(&g.levels[0], g.dim, &cands[0], len(cands), &diffs, &wdiffs); k >= 0 {
					got = int(cands[k])
				}
				if got != want {
					t.Fatalf("%s: u=%d scale=%g x=%v w=%v: assembly picks %d, Go %d", mode, u, scale, xval, weight, got, want)
				}
			}
		})
	}
}
