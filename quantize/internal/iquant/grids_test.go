package iquant

import (
	"slices"
	"testing"
)

// slowNeighbours is the direct construction of the candidate list of an
// off-grid level vector u: every grid point at one of the nwant smallest
// distinct squared distances, by distance, then index.
func slowNeighbours(g *codeGrid, u, nwant int) []uint16 {
	mask := 1<<g.bits - 1
	npoints := len(g.levels) / g.dim
	dist := make([]int, npoints)
	for j := range dist {
		for i := 0; i < g.dim; i++ {
			d := int(g.points[j*g.dim+i]) - (2*(u>>(g.bits*i)&mask) + 1)
			dist[j] += d * d
		}
	}
	var out []uint16
	last := -1
	for range nwant {
		next := -1
		for _, d := range dist {
			if d > last && (next < 0 || d < next) {
				next = d
			}
		}
		if next < 0 {
			break
		}
		for j, d := range dist {
			if d == next {
				out = append(out, uint16(j))
			}
		}
		last = next
	}
	return out
}

// TestCodeGridNeighbours checks the table-driven neighbour lists (and their
// vector-search lanes) against the direct construction on a sample of the
// off-grid vectors of every grid, and laneIndex on every lane.
func TestCodeGridNeighbours(t *testing.T) {
	grids := []struct {
		name  string
		grid  func() *codeGrid
		nwant int
	}{
		{"iq2_xxs", iq2xxsGrid, 2}, {"iq2_xs", iq2xsGrid, 2}, {"iq2_s", iq2sGrid, 1},
		{"iq1_s", iq1sGrid, 3}, {"iq3_xxs", iq3xxsGrid, 2}, {"iq3_s", iq3sGrid, 3},
	}
	for _, tc := range grids {
		g := tc.grid()
		checked := 0
		for u, v := range g.kmap {
			if v >= 0 || u%37 != 0 {
				continue
			}
			got, want := g.neighboursOf(u), slowNeighbours(g, u, tc.nwant)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: u=%d: neighbours %v, want %v", tc.name, u, got, want)
			}
			j := g.job(0, u)
			if int(j.chunks) != (len(got)+7)/8 {
				t.Fatalf("%s: u=%d: %d chunks for %d candidates", tc.name, u, j.chunks, len(got))
			}
			lanes := g.lanes[j.laneOff:][:j.chunks*8]
			for k, word := range lanes {
				n := int(got[min(k, len(got)-1)])
				if got := g.laneIndex(int(j.laneOff) + k); got != n {
					t.Fatalf("%s: u=%d lane %d: grid index %d, want %d", tc.name, u, k, got, n)
				}
				for c := 0; c < g.dim; c++ {
					if f := int(word>>(3*c)) & 7; f != (c<<g.bits+int(g.levels[n*g.dim+c]))&7 {
						t.Fatalf("%s: u=%d lane word %d coordinate %d: field %d", tc.name, u, k, c, f)
					}
				}
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("%s: no off-grid vector checked", tc.name)
		}
		// Every lane word, not only the sample's, names a grid point
		// whose levels it holds.
		for i, word := range g.lanes {
			n := g.laneIndex(i)
			if n < 0 || n >= len(g.levels)/g.dim {
				t.Fatalf("%s: lane %d: grid index %d", tc.name, i, n)
			}
			for c := 0; c < g.dim; c++ {
				if f := int(word>>(3*c)) & 7; f != (c<<g.bits+int(g.levels[n*g.dim+c]))&7 {
					t.Fatalf("%s: lane %d (grid index %d) coordinate %d: field %d", tc.name, i, n, c, f)
				}
			}
		}
	}
}

// TestPackMatchesShifts checks codeGrid.pack's folded word against the
// level-by-level shifts for every level vector of both grid shapes.
func TestPackMatchesShifts(t *testing.T) {
	for _, g := range []*codeGrid{{dim: 8, bits: 2}, {dim: 4, bits: 3}} {
		var L [8]int8
		for u := 0; u < 1<<(g.dim*g.bits); u++ {
			for i := 0; i < g.dim; i++ {
				L[i] = int8(u >> (g.bits * i) & (1<<g.bits - 1))
			}
			if got := g.pack(L[:]); got != u {
				t.Fatalf("dim %d: pack(%v) = %d, want %d", g.dim, L[:g.dim], got, u)
			}
		}
	}
}

func TestSplitScoresScratchSizes(t *testing.T) {
	if iq2xsScoresLen < splitScoresLen(16, 1) || iq1ScoresLen < splitScoresLen(32, 2) || iq1ScoresLen < splitScoresLen(16, 4) {
		t.Fatalf("split score scratch too small: %d for iq2_xs (need %d), %d for iq1 (need %d and %d)",
			iq2xsScoresLen, splitScoresLen(16, 1), iq1ScoresLen, splitScoresLen(32, 2), splitScoresLen(16, 4))
	}
}
