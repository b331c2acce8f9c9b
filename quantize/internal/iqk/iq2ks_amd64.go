//go:build amd64 && !purego

package iqk

import (
	"github.com/gquant/gquant/internal/cpu"
	"github.com/gquant/gquant/internal/tables"
)

// useIQ2KSAVX2 selects the assembly fit of the fast iq2_ks search; tests
// clear it to check the portable code on the same machine.
var useIQ2KSAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useIQ2KS512 selects iq2ksFitsCount512 over iq2ksFitsCountAVX2 (on top of
// useIQ2KSAVX2, which stays what machines without AVX-512 run).
var useIQ2KS512 = useIQ2KSAVX2 && cpu.X86.HasAVX512

// iq2ksFitAVX2 computes the lane-reduced sums of one fit for d and -d.
//
//go:noescape
func iq2ksFitAVX2(x, w *float32, params *[12]float32, out *[4]float32)

// iq2ksErrorAVX2 is iq2ksBlockError's nearest indices and weighted error
// for one 32-weight block (the reference's compare-and-blend selection).
//
//go:noescape
func iq2ksErrorAVX2(x, w *float32, params *[8]float32, negD float32, idx *[32]int32) float32

// iq2ksFitsAVX2 runs iq2ksFitAVX2 for n > 0 parameter sets at params[0..n)
// into out[0..n) (pointers to the first of consecutive arrays).
//
//go:noescape
func iq2ksFitsAVX2(x, w *float32, params *[12]float32, n int, out *[4]float32)

// iq2ksGrid is one grid for iq2ksFitsCountAVX2: each point broadcast to 8
// lanes, and the VPERMPS table from minus the counted index to the point.
type iq2ksGrid struct {
	vb   [4][8]float32
	perm [8]float32
}

// iq2ksGrids are the plain and the shifted grid.
var iq2ksGrids = func() (g [2]iq2ksGrid) {
	for s := range g {
		v := tables.IQ2NLValues[4*s : 4*s+4]
		for j := range v {
			for l := range g[s].vb[j] {
				g[s].vb[j][l] = float32(v[j])
			}
		}
		g[s].perm = [8]float32{float32(v[0]), 0, 0, 0, 0, float32(v[3]), float32(v[2]), float32(v[1])}
	}
	return
}()

// iq2ksFitSums are the sums of the 55 fits of a block (and one lane of
// padding), one array per sum so that iq2ksPickAVX2 takes 8 fits at once.
type iq2ksFitSums struct {
	sumqx1, sumq21, sumqx2, sumq22 [56]float32
}

// iq2ksPicks are iq2ksPick's results for the fits of iq2ksFitSums.
type iq2ksPicks struct {
	ok           [56]int32 // -1 or 0
	bestD, score [56]float32
}

// iq2ksFitsCountAVX2 runs the fits of iq2ksFitsAVX2 for the n > 0 scales
// maxv/den[0..n) on one grid, the nearest points found by counting, and
// leaves each fit's four 8-lane sums unreduced in raw[f].
//
//go:noescape
func iq2ksFitsCountAVX2(x, w *float32, maxv float32, den *float32, n int, grid *iq2ksGrid, raw *[4][8]float32)

// iq2ksFitsCount512 is iq2ksFitsCountAVX2 with two scales per 512-bit
// register (the same raw sums, bit for bit).
//
//go:noescape
func iq2ksFitsCount512(x, w *float32, maxv float32, den *float32, n int, grid *iq2ksGrid, raw *[4][8]float32)

// iq2ksReducePickAVX2 reduces the raw sums of 56 fits as hsum8 does and
// picks as iq2ksPick.
//
//go:noescape
func iq2ksReducePickAVX2(raw *[56][4][8]float32, p *iq2ksPicks)

// iq2ksPickAVX2 is iq2ksPick for all fits of s.
//
//go:noescape
func iq2ksPickAVX2(s *iq2ksFitSums, p *iq2ksPicks)

// iq2ksAccumAVX2 adds one block's terms to the second pass's 8-lane sums:
// q = vd*values[idx[i]], acc[l] += (w·q)·x and acc[8+l] += (w·q)·q, fused.
//
//go:noescape
func iq2ksAccumAVX2(x, w *float32, idx *[32]uint8, values *[8]float32, vd float32, acc *[16]float32)

// iq2ksFitsThr512 is iq2ksFitsCount512 for the 27 trial scales of one grid
// (maxv/den[0..27), den negative; den[27..32) pads the last 16) with the
// nearest points found against per-scale thresholds, which it first
// searches exactly (see iq2ksThrGrid); the same raw sums, bit for bit.
// It reports false, raw untouched, when a threshold is not among the
// grid's candidates: the caller then counts.
//
//go:noescape
func iq2ksFitsThr512(x, w *float32, maxv float32, den *[32]float32, grid *iq2ksThrGrid, raw *[4][8]float32) (ok bool)

// iq2ksThrGrid is one grid for iq2ksFitsThr512.
//
// For a scale of size s = |d|, with a = s·v_j and b = s·v_{j+1}, the fits
// count y = ±x past threshold j when (y-b)^2 < (y-a)^2, both rounded as
// COUNT_CHUNK rounds them. Under countingNearest that predicate is false
// up to a, true from b on and monotone between (x-a rounds up and |x-b|
// down as x grows), so it holds exactly for y >= t_j, the first float
// where it does. t_j lies a few steps above the rounded midpoint
// m = (a+b)·0.5: the kernel tries the candidates m + start + k·dir
// (k = 0..mid+1, in the bits; dir steps up in value) and needs the first
// short of t_j and the last past it. The windows cover what 3 million
// random scales of 40 binades gave, with a step to spare on either side
// (t_j - m in steps: 0..2, and 1..5 for the middle threshold of the
// shifted grid, whose midpoint -s is small against its half-gap 7s);
// TestIQ2KSThrWindows checks them.
type iq2ksThrGrid struct {
	vb    [4]float32 // v0..v3
	q     [4]float32 // v0, v1, v2-v1, v3-v2
	dir   [3]int32
	start [3]int32
	mid   [3]int32
}

// iq2ksThrGrids are the plain and the shifted grid.
var iq2ksThrGrids = func() (g [2]iq2ksThrGrid) {
	for s := range g {
		v := tables.IQ2NLValues[4*s : 4*s+4]
		for j := range v {
			g[s].vb[j] = float32(v[j])
		}
		g[s].q = [4]float32{float32(v[0]), float32(v[1]), float32(v[2] - v[1]), float32(v[3] - v[2])}
		for j := 0; j < 3; j++ {
			g[s].dir[j] = 1
			if v[j]+v[j+1] < 0 {
				g[s].dir[j] = -1
			}
			// From two steps below the midpoint to three above, or for
			// the shifted grid's middle threshold from one below to
			// seven above: a step to spare on either side.
			g[s].start[j], g[s].mid[j] = -2*g[s].dir[j], 4
			if s == 1 && j == 1 {
				g[s].start[j], g[s].mid[j] = -g[s].dir[j], 7
			}
		}
	}
	return
}()

// iq2ksThrDen are the trial denominators of each grid for
// iq2ksFitsThr512: iq2ksTrialDen[1..28) and [28..55), padded with the
// last.
var iq2ksThrDen = func() (den [2][32]float32) {
	for s := range den {
		for i := range den[s] {
			den[s][i] = iq2ksTrialDen[1+27*s+min(i, 26)]
		}
	}
	return
}()
