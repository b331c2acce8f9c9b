//go:build amd64 && !purego

package iquant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNeighbourAVX2MatchesGo checks the vector neighbour search against the
// portable one (findBestNeighbour and iq1's findBestNeighbour2 with either
// path) on random data, with inputs built to tie (zero weights, points
// halfway between levels, equal weights), negative weights, NaN and huge
// values whose sums overflow.
func TestNeighbourAVX2MatchesGo(t *testing.T) {
	if !useNeighbourAVX2 {
		t.Skip("no AVX2/FMA")
	}
	defer func() { useNeighbourAVX2 = true }()
	grids := []struct {
		name string
		grid func() *codeGrid
	}{
		{"iq2_xxs", iq2xxsGrid}, {"iq2_xs", iq2xsGrid}, {"iq2_s", iq2sGrid},
		{"iq1_s", iq1sGrid}, {"iq3_xxs", iq3xxsGrid}, {"iq3_s", iq3sGrid},
	}
	modes := []string{"random", "zero-weights", "midpoints", "equal-weights", "negative-weights", "nan", "huge"}
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
					case "huge":
						xval[i] *= 1e19
						if r.IntN(2) == 0 {
							xval[i] = scale * float32(2*r.IntN(levels)+1)
						}
					}
				}
				var L [8]int8
				xx := [3]*[3]float32{&xP, &xM, {0.3, -1, 2.5}}[iter%3]
				useNeighbourAVX2 = false
				want := g.findBestNeighbour(u, xval, weight, scale, L[:])
				want2 := -2
				if g.bits == 2 {
					want2 = findBestNeighbour2(g, u, xval, weight, scale, xx, L[:])
				}
				useNeighbourAVX2 = true
				got := g.findBestNeighbour(u, xval, weight, scale, L[:])
				got2 := -2
				if g.bits == 2 {
					got2 = findBestNeighbour2(g, u, xval, weight, scale, xx, L[:])
				}
				if got2 != want2 {
					t.Fatalf("%s: iq1 u=%d scale=%g x=%v w=%v: assembly picks %d, Go %d", mode, u, scale, xval, weight, got2, want2)
				}
				if got != want {
					t.Fatalf("%s: u=%d scale=%g x=%v w=%v: assembly picks %d, Go %d", mode, u, scale, xval, weight, got, want)
				}
			}
		})
	}
}

// TestFindBestNeighboursMatchesGo checks the batched vector search (several
// groups of one block in one call) against the portable search group by
// group, including groups left on the grid between off-grid ones.
func TestFindBestNeighboursMatchesGo(t *testing.T) {
	if !useNeighbourAVX2 {
		t.Skip("no AVX2/FMA")
	}
	defer func() { useNeighbourAVX2 = true }()
	for _, grid := range []func() *codeGrid{iq2xxsGrid, iq2xsGrid, iq2sGrid, iq3xxsGrid, iq3sGrid} {
		g := grid()
		r := rand.New(rand.NewPCG(5, uint64(len(g.lanes))))
		var offGrid []int
		for u, v := range g.kmap {
			if v < 0 {
				offGrid = append(offGrid, u)
			}
		}
		const n = 32
		xval := make([]float32, n)
		weight := make([]float32, n)
		for iter := 0; iter < 3000; iter++ {
			scale := float32(r.ExpFloat64() * 0.01)
			for i := range xval {
				xval[i] = float32(r.NormFloat64()) * scale * float32(int(1)<<g.bits)
				weight[i] = float32(r.ExpFloat64())
				if iter%3 == 1 {
					xval[i] = scale * float32(2*r.IntN(1<<g.bits)+2)
					weight[i] = 1
				}
			}
			var jobs []nbJob
			for k := 0; k < n/g.dim; k++ {
				if r.IntN(4) != 0 {
					jobs = append(jobs, g.job(k, offGrid[r.IntN(len(offGrid))]))
				}
			}
			var got, want [n]int8
			useNeighbourAVX2 = false
			wantOK := g.findBestNeighbours(jobs, xval, weight, scale, want[:])
			useNeighbourAVX2 = true
			gotOK := g.findBestNeighbours(jobs, xval, weight, scale, got[:])
			if gotOK != wantOK || got != want {
				t.Fatalf("dim %d: jobs %v x=%v w=%v scale=%g: assembly levels %v, Go %v", g.dim, jobs, xval, weight, scale, got, want)
			}
		}
	}
}
