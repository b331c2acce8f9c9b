package iquant

import (
	"math/bits"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Split scores: iq2_xs, iq1_s and iq1_m try every split (i1, i2), i1 <= i2,
// of a block's sorted values into three runs of levels and keep the best
// score. The scores of all splits are computed first, eight consecutive i2
// per chunk (for each i1, chunks start at i2 = i1, i1+8, ... while i2 <= n),
// by the assembly or by the portable functions below with the same layout;
// the selection then walks them in the reference's (i1, i2) order. Lanes
// past n are never read. Prefix sums must be readable up to index n+7.

// splitChunks is the number of chunks of eight i2 for a block of n values.
func splitChunks(n int) int {
	switch n { // the block sizes of the callers, without the loop
	case 16:
		return 27
	case 32:
		return 85
	}
	c := 0
	for i1 := 0; i1 <= n; i1++ {
		c += (n - i1 + 8) / 8
	}
	return c
}

const (
	iq2xsSplitLen = 27 * 16 // splitChunks(16) chunks of sumqx[8], sumq2[8]
	iq1sSplitLen  = 85 * 32 // splitChunks(32) chunks of (plus, minus) x (sumqx[8], sumq2[8])
	iq1mSplitLen  = 27 * 64 // splitChunks(16) chunks of 4 combinations x (sumqx[8], sumq2[8])
)

// iq2xsSplitSums scores the splits of 16 values into levels 1, 3, 5 from the
// prefix sums sumx (of w*x) and sumw (of w).
func iq2xsSplitSums(sumx, sumw *[24]float32, out *[iq2xsSplitLen]float32) {
	if useSplitAVX2 {
		iq2xsSplitSumsAVX2(&sumx[0], &sumw[0], &out[0])
		return
	}
	pos := 0
	for i1 := 0; i1 <= 16; i1++ {
		for c := i1; c <= 16; c += 8 {
			for lane := 0; lane < 8 && c+lane <= 16; lane++ {
				i2 := c + lane
				out[pos+lane] = kernel.FMA32(sumx[16]-sumx[i2], 5, kernel.FMA32(sumx[i2]-sumx[i1], 3, sumx[i1]-sumx[0]))
				out[pos+8+lane] = kernel.FMA32(sumw[16]-sumw[i2], 25, kernel.FMA32(sumw[i2]-sumw[i1], 9, sumw[i1]-sumw[0]))
			}
			pos += 16
		}
	}
}

// iq1sVals holds the plus-shift levels, then the minus-shift levels.
var iq1sVals = [6]float32{xP[0], xP[1], xP[2], xM[0], xM[1], xM[2]}

// iq1sSplitSums scores the splits of n values (splitScore) with the plus
// shift and then the minus shift.
func iq1sSplitSums(sumx, sumw []float32, n int, out *[iq1sSplitLen]float32) {
	if useSplitAVX2 {
		_ = sumx[n+7]
		_ = sumw[n+7]
		iq1sSplitSumsAVX2(&sumx[0], &sumw[0], n, &iq1sVals, &out[0])
		return
	}
	pos := 0
	for i1 := 0; i1 <= n; i1++ {
		for c := i1; c <= n; c += 8 {
			for lane := 0; lane < 8 && c+lane <= n; lane++ {
				i2 := c + lane
				out[pos+lane], out[pos+8+lane] = splitScore(sumx, sumw, i1, i2, n, &xP, false)
				out[pos+16+lane], out[pos+24+lane] = splitScore(sumx, sumw, i1, i2, n, &xM, true)
			}
			pos += 32
		}
	}
}

// iq1mVals holds the plus-shift and minus-shift levels, each broadcast.
var iq1mVals = func() (v [6][8]float32) {
	for i := range v {
		for j := range v[i] {
			v[i][j] = iq1sVals[i]
		}
	}
	return v
}()

// iq1mCombos are the level values of both halves for each shift combination.
var iq1mCombos = [4][2]*[3]float32{{&xP, &xP}, {&xP, &xM}, {&xM, &xP}, {&xM, &xM}}

// iq1mSplitSums scores the splits of 16 values for the four shift
// combinations, from the prefix sums of each half (sx1, sw1: first half).
//
// Each sum runs over six terms: the first half's three runs, then the second
// half's. GCC vectorizes the four shift combinations and fuses only the
// product of each half's last run (checked against its object code); the
// products of the first runs are hoisted out of the i2 loop.
func iq1mSplitSums(sx1, sx2, sw1, sw2 *[24]float32, out *[iq1mSplitLen]float32) {
	if useSplitAVX2 {
		iq1mSplitSumsAVX2(&sx1[0], &sx2[0], &sw1[0], &sw2[0], &iq1mVals, &out[0])
		return
	}
	const bs = 16
	pos := 0
	for i1 := 0; i1 <= bs; i1++ {
		for c := i1; c <= bs; c += 8 {
			for lane := 0; lane < 8 && c+lane <= bs; lane++ {
				sums := iq1mPositionSums(sx1, sx2, sw1, sw2, i1, c+lane)
				for k, qs := range sums {
					out[pos+16*k+lane], out[pos+16*k+8+lane] = qs[0], qs[1]
				}
			}
			pos += 64
		}
	}
}

// iq1mPositionSums returns sumqx and sumq2 of the split (i1, i2) of 16
// values for each shift combination (iq1mSplitSums' arithmetic).
func iq1mPositionSums(sx1, sx2, sw1, sw2 *[24]float32, i1, i2 int) (sums [4][2]float32) {
	const bs = 16
	a1, b1, c1 := sx1[i1]-sx1[0], sx1[i2]-sx1[i1], sx1[bs]-sx1[i2]
	a2, b2, c2 := sx2[i1]-sx2[0], sx2[i2]-sx2[i1], sx2[bs]-sx2[i2]
	wa1, wb1, wc1 := sw1[i1]-sw1[0], sw1[i2]-sw1[i1], sw1[bs]-sw1[i2]
	wa2, wb2, wc2 := sw2[i1]-sw2[0], sw2[i2]-sw2[i1], sw2[bs]-sw2[i2]
	for k, cb := range iq1mCombos {
		u, v := cb[0], cb[1]
		sumqx := kernel.FMA32(c1, u[2], float32(a1*u[0])+float32(b1*u[1]))
		sumqx = kernel.FMA32(c2, v[2], sumqx+float32(a2*v[0])+float32(b2*v[1]))
		sumq2 := kernel.FMA32(float32(wc1*u[2]), u[2], float32(float32(wa1*u[0])*u[0])+float32(float32(wb1*u[1])*u[1]))
		sumq2 = kernel.FMA32(float32(wc2*v[2]), v[2], sumq2+float32(float32(wa2*v[0])*v[0])+float32(float32(wb2*v[1])*v[1]))
		sums[k] = [2]float32{sumqx, sumq2}
	}
	return sums
}

// splitState is the running choice of a split search: the best score, its
// scale and where it was found (slot: which of the chunk's score pairs). The
// assembly assumes this layout.
type splitState struct {
	best, scale  float32
	i1, i2, slot int32
}

// splitScan walks a split-score layout of a block of n values with slots
// score pairs per chunk in the reference's order (i1, then i2, then slot)
// and keeps the first best: a split replaces the current one when sumq2 > 0
// and sumqx*sumqx > best*sumq2 (both products rounded); then scale =
// sumqx/sumq2 and best = scale*sumqx.
func splitScan(out []float32, n, slots int, st *splitState) {
	_ = out[splitChunks(n)*16*slots-1]
	if useSplitAVX2 {
		splitScanAVX2(&out[0], n, slots, st)
		return
	}
	pos := 0
	for i1 := 0; i1 <= n; i1++ {
		for c := i1; c <= n; c += 8 {
			ch := out[pos : pos+16*slots]
			pos += 16 * slots
			for lane := 0; lane < 8 && c+lane <= n; lane++ {
				for k := 0; k < slots; k++ {
					sumqx, sumq2 := ch[16*k+lane], ch[16*k+8+lane]
					if sumq2 > 0 && float32(sumqx*sumqx) > float32(st.best*sumq2) {
						st.scale = sumqx / sumq2
						st.best = st.scale * sumqx
						st.i1, st.i2, st.slot = int32(i1), int32(c+lane), int32(k)
					}
				}
			}
		}
	}
}

// splitTopMax is the most chunks splitScanTop lists (fixed in
// splittop_amd64.s).
const splitTopMax = 32

// splitChunkStart maps a chunk of the split-score layout of n = 16 or 32
// values to its i1 (low byte) and first i2 (high byte).
var splitChunkStart = func() (m [2][85]uint16) {
	for b, n := range [2]int{16, 32} {
		k := 0
		for i1 := 0; i1 <= n; i1++ {
			for c := i1; c <= n; c += 8 {
				m[b][k] = uint16(i1 | c<<8)
				k++
			}
		}
	}
	return m
}()

// Scratch sizes for splitScanScores (checked against splitScoresLen by
// TestSplitScoresScratchSizes).
const (
	iq2xsScoresLen = 27 * 8 * 2 // splitScoresLen(16, 1)
	iq1ScoresLen   = 85 * 8 * 3 // splitScoresLen(32, 2), >= splitScoresLen(16, 4)
)

// splitScoresLen is the scratch splitScanScores needs for a layout of n
// values with slots pairs per chunk: every score and each chunk's maximum.
func splitScoresLen(n, slots int) int { return splitChunks(n) * 8 * (slots + 1) }

// splitScanScores is splitScan with scratch for the scores (at least
// splitScoresLen(n, slots) values): when st.best <= 0 it first tries
// splitScanTop.
func splitScanScores(out, scores []float32, n, slots int, st *splitState) {
	if useSplitAVX2 && st.best <= 0 && (n == 16 || n == 32) && splitScanTop(out, scores, n, slots, st) {
		return
	}
	splitScan(out, n, slots, st)
}

// splitScanTop is splitScan restricted to the positions that can be the
// final choice. With M the largest score sumqx*sumqx/sumq2 among the
// positions with sumq2 > 0, and no score within a few ulps of the cut
// between lo and hi (both just below M, 8e-6 apart, far more than the
// rounding of the reference's test), the positions with a score >= hi
// decide: the first of them passes the test against any best set before it
// (a score <= lo, or the initial best <= 0), and no position with a score
// <= lo passes once one of them set the best. So the reference's walk over
// those positions alone, from any best <= 0, ends where the full walk does.
// It reports false (st unchanged) when the shortcut does not apply.
func splitScanTop(out, scores []float32, n, slots int, st *splitState) bool {
	chunks := splitChunks(n)
	_ = out[chunks*16*slots-1]
	scores = scores[:chunks*8*(slots+1)]
	var cand [2 * splitTopMax]uint32
	nc := splitTopAVX2(&out[0], n, slots, &scores[0], &scores[chunks*8*slots], &cand)
	if nc < 0 {
		return false
	}
	starts := &splitChunkStart[n/32]
	best, scale := float32(0), float32(0)
	var i1, i2, slot int32 = -1, -1, -1
	for e := 0; e < nc; e++ {
		chunk, mask := int(cand[2*e]), cand[2*e+1]
		start := starts[chunk]
		ch := out[chunk*16*slots : (chunk+1)*16*slots]
		lanes := mask | mask>>8 | mask>>16 | mask>>24
		for lanes &= 0xff; lanes != 0; lanes &= lanes - 1 {
			lane := bits.TrailingZeros32(lanes)
			for k := 0; k < slots; k++ {
				if mask>>(8*k+lane)&1 == 0 {
					continue
				}
				sumqx, sumq2 := ch[16*k+lane], ch[16*k+8+lane]
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					scale = sumqx / sumq2
					best = scale * sumqx
					i1, i2, slot = int32(start&0xff), int32(start>>8)+int32(lane), int32(k)
				}
			}
		}
	}
	if i1 < 0 {
		return false // cannot happen when M >= hi > 0; kept for safety
	}
	st.best, st.scale, st.i1, st.i2, st.slot = best, scale, i1, i2, slot
	return true
}
