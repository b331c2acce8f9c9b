//go:build amd64 && !purego

package iqk

import (
	"math"

	"github.com/gquant/gquant/internal/cpu"
)

// useSplitSearchAVX2 selects the assembly version of splitSearch's pruned
// search (splitSearchAVX2); tests clear it to check the portable loop.
var useSplitSearchAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// splitConsts are the block-independent rows splitSearchAVX2 reads, and
// splitTab its per-block working memory. The assembly addresses their
// fields by go_asm.h's offsets (splitTab_xs ...); the fields marked so are
// used by the assembly only. Rows of four hold one variant per lane unless
// said otherwise.
type splitConsts struct {
	vf         [4][4]float32 // row j: grid point j of each variant
	c          [4][4]float64 // row k: dx_k^2 in every lane
	dv01, dv12 [4]float64    // v0-v1, v1-v2
	dq01, dq12 [4]float64    // v0^2-v1^2, v1^2-v2^2
	v3, vq3    [4]float64    // v3, v3^2
	dx2, dq    [4]float64    // 2*(v2-v3), v2^2-v3^2
	bqScale    float64       // 1-1e-5
	rDiv       float64       // 1+1e-4
	slack      float64       // relative slack of the expanded bound
}

type splitTab struct {
	xs, xq, ws [32]float64 // sumx[i], sumx[i]^2, sumw[i] as float64, i < n
	//lint:ignore U1000 used by the assembly only
	qxt, qqt [32][4]float64 // per i2: sumx[i2]*(v1-v2), sumw[i2]*(v1^2-v2^2)
	//lint:ignore U1000 used by the assembly only
	e, rrow [4]float64 // broadcast: e2 plus the slack; r
	//lint:ignore U1000 used by the assembly only
	px, pq [4]float64 // per i1: sumx[i1]*(v0-v1) + xN*v3, the same for sumw
	//lint:ignore U1000 used by the assembly only
	g          [4][4]float64 // row k: r*dq_k, broadcast
	r, rL      float64       // max(bq/(1+1e-4), rL); the global bound
	e2, sx, sq float64       // slack terms: e = e2 + slack*(sx + r*sq)
	xN, wN     float64
	minI3      int64
	//lint:ignore U1000 used by the assembly only
	hx, hq [4]float32 // scratch
	//lint:ignore U1000 used by the assembly only
	qx, q2, qq [4]float32 // scratch: sumqx, sumq2, sumqx^2 at one i3
	//lint:ignore U1000 used by the assembly only
	best    float32
	d       float32
	shifted int64
}

// splitK holds the constants of splitSearchAVX2.
var splitK = func() (c splitConsts) {
	v := &iq2Variants
	for k := range v {
		f := func(j int) float64 { return float64(v[k][j]) }
		for j := 0; j < 4; j++ {
			c.vf[j][k] = v[k][j]
		}
		dx := f(2) - f(3)
		for l := 0; l < 4; l++ {
			c.c[k][l] = dx * dx
		}
		c.dv01[k], c.dv12[k] = f(0)-f(1), f(1)-f(2)
		c.dq01[k], c.dq12[k] = f(0)*f(0)-f(1)*f(1), f(1)*f(1)-f(2)*f(2)
		c.v3[k], c.vq3[k] = f(3), f(3)*f(3)
		c.dx2[k], c.dq[k] = 2*dx, f(2)*f(2)-f(3)*f(3)
	}
	c.bqScale = 1 - 1e-5
	c.rDiv = 1 + 1e-4
	c.slack = 1e-12
	return
}()

// splitDxMax and splitDqMax are the largest |v2-v3| and |v2^2-v3^2| of the
// variants.
var splitDxMax, splitDqMax = func() (dx, dq float64) {
	for k := 0; k < 4; k++ {
		dx = max(dx, math.Abs(splitK.dx2[k]/2))
		dq = max(dq, math.Abs(splitK.dq[k]))
	}
	return
}()

// splitSearchFast runs splitSearch's pruned search in assembly for blocks
// of n = 4, 8, ..., 32 values. Instead of the portable loop's four variants
// per vector it tests four consecutive i3 per vector, one vector per
// variant, with the bound expanded into a quadratic in x = sumx[i3]:
// (cx + x*dx)^2 + e2 - r*(cq + w*dq) = dx^2*x^2 + 2*cx*dx*x + (cx^2 + e2 -
// r*cq) - r*dq*w, and cx, cq split into a part of i1 and one of i2
// (cx = sumx[i1]*(v0-v1) + sumx[i2]*(v1-v2) + xN*v3, exact differences in
// place of the float32 ones: far inside errX and the relative margins). The
// extra float64 rounding (a few roundings of terms up to ~1e4*absSum^2,
// against e2 >= 0.015*absSum^2) is covered by adding 1e-12 times a bound on
// the sum of the terms' magnitudes to e2. Candidates that pass are
// evaluated exactly, in float32 with hardware FMA, in the reference's order.
func splitSearchFast(sumx, sumw []float32, e2, rL float64, maxI1, minI3 int) (d float32, isShifted bool) {
	n := len(sumx) - 1
	var t splitTab
	var xmax, wmax float64
	for i := 0; i <= n; i++ {
		xmax = max(xmax, math.Abs(float64(sumx[i])))
		wmax = max(wmax, math.Abs(float64(sumw[i])))
	}
	for i := 0; i < n; i++ {
		x := float64(sumx[i])
		t.xs[i], t.xq[i], t.ws[i] = x, x*x, float64(sumw[i])
	}
	t.xN, t.wN = float64(sumx[n]), float64(sumw[n])
	// |cx| <= 31*(|a0|+|a1|+|x2|+|xN|) <= 155*xmax, |cq| <= 5*961*wmax.
	cxb := 155 * xmax
	t.sx = splitDxMax*splitDxMax*xmax*xmax + 2*cxb*splitDxMax*xmax + cxb*cxb + e2
	t.sq = (5*961 + splitDqMax) * wmax
	t.e2, t.r, t.rL = e2, rL, rL
	t.minI3 = int64(minI3)
	splitSearchAVX2(&sumx[0], &sumw[0], n, maxI1, &splitK, &t)
	return t.d, t.shifted != 0
}

// splitSearchAVX2 is the whole pruned split search of one block: pairs
// (i1, i2) in the reference's order, per pair the bound of four i3 at a
// time for the four variants, and the exact float32 evaluation of every
// variant at each i3 where some variant's bound is >= 0. Results in t.d,
// t.shifted (t.best, t.r are updated as it goes).
//
//go:noescape
func splitSearchAVX2(sumx, sumw *float32, n, maxI1 int, k *splitConsts, t *splitTab)

// sortRanksAVX2 is sortedOrder for n a positive multiple of 8 (at most
// 2^31) whose values hold no NaN; with a NaN it returns false and leaves
// idx alone.
//
//go:noescape
func sortRanksAVX2(x *float32, n int, idx *int) bool
