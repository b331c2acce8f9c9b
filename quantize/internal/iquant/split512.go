package iquant

import "math/bits"

// The AVX-512 split searches (split512_amd64.s) of iq1_s and iq1_m find the
// same split as splitScan without computing every score exactly.
//
// One pass computes every position's sumqx and sumq2 exactly as the
// portable code does, and an approximate score a (sumqx*sumqx times an
// approximate reciprocal of sumq2, within 6.2e-5 of the exact score
// s = sumqx*sumqx/sumq2); a second pass lists the positions with
// a >= T = max(a)*(1 - 2^-12). With M the largest exact score,
// max(a) <= M*(1+6.12e-5), and a position left out has
// s <= a/(1-6.12e-5) < T/(1-6.12e-5) <= M*(1-1.217e-4). The
// listed positions are recomputed here (splitScore and friends, the same
// arithmetic) and splitSelect finishes much as splitScanTop does: M is
// among them, and every position left out scores below M*(1-1.2e-4). When
// this cannot be shown (the assembly reports unsafe ranges or too many
// candidates) or the candidates' scores leave no gap to cut at, the caller
// runs the AVX2 search.

// splitTop512Max is the most vectors with candidates the assembly lists.
const splitTop512Max = 8

// splitPosMax is the most candidate positions splitSelect takes.
const splitPosMax = 48

// iq1sTop512Chunks is the number of vectors of sixteen i2 of the split
// layout of n = 32 (for each i1, i2 = i1, i1+16, ... while <= 32); each
// has the approximate scores of both shifts.
const (
	iq1sTop512Chunks = 51
	iq1sTop512Len    = iq1sTop512Chunks * 32
)

// iq1sChunk512 maps a vector of that layout to its i1 (low byte) and first
// i2 (high byte).
var iq1sChunk512 = func() (m [iq1sTop512Chunks]uint16) {
	k := 0
	for i1 := 0; i1 <= 32; i1++ {
		for c := i1; c <= 32; c += 16 {
			m[k] = uint16(i1 | c<<8)
			k++
		}
	}
	return m
}()

// A splitPos is one candidate split: its position and exact sums.
type splitPos struct {
	i1, i2, slot int32
	sumqx, sumq2 float32
}

// iq1sSplitSearch512 is the split search of iq1_s for n = 32 (plus shift
// in slot 0, minus in slot 1) from the prefix sums sx, sw (sx[0] = sw[0] =
// 0, readable to index 47) with scratch for iq1sTop512Len scores. It
// reports false, st unchanged, where the AVX2 search has to run.
func iq1sSplitSearch512(sx, sw, scores []float32, st *splitState) bool {
	_, _ = sx[47], sw[47]
	scores = scores[:iq1sTop512Len]
	var cand [2 * splitTop512Max]uint64
	nc := iq1sSplitTop512(&sx[0], &sw[0], &iq1sVals, &scores[0], &cand)
	if nc < 0 {
		return false
	}
	var pos [splitPosMax]splitPos
	np := 0
	for e := 0; e < nc; e++ {
		start, mask := iq1sChunk512[cand[2*e]&127], cand[2*e+1]
		i1, c := int(start&0xff), int(start>>8)
		for lanes := uint16(mask) | uint16(mask>>16); lanes != 0; lanes &= lanes - 1 {
			lane := bits.TrailingZeros16(lanes)
			for k := 0; k < 2; k++ {
				if mask>>(16*k+lane)&1 == 0 {
					continue
				}
				if np == splitPosMax {
					return false
				}
				var qx, q2 float32
				if k == 0 {
					qx, q2 = splitScore(sx, sw, i1, c+lane, 32, &xP, false)
				} else {
					qx, q2 = splitScore(sx, sw, i1, c+lane, 32, &xM, true)
				}
				pos[np] = splitPos{int32(i1), int32(c + lane), int32(k), qx, q2}
				np++
			}
		}
	}
	return splitSelect(pos[:np], st)
}

// splitSelect finishes a search from its candidates, given in the
// reference's order, or reports false (st unchanged).
//
// Every position left out scores below floor = M*0.99988 (see the top of
// this file: at most M*(1-1.217e-4)). The candidates are cut at the highest
// gap of relative width 1e-5 in their scores that lies above floor: those
// above the gap decide, as in splitScanTop. The gap is far wider than the
// rounding of the reference's test (a few ulps): the first position above
// it passes against any best set below it, and once it has set the best,
// no position below the gap passes again.
func splitSelect(pos []splitPos, st *splitState) bool {
	var scores [splitPosMax]float32
	var order [splitPosMax]uint8 // valid candidates by descending score
	k := 0
	for i, p := range pos {
		s := float32(p.sumqx*p.sumqx) / p.sumq2
		if !(p.sumq2 > 0) || s != s {
			continue // never passes the reference's test
		}
		scores[i] = s
		j := k
		for j > 0 && scores[order[j-1]] < s {
			order[j] = order[j-1]
			j--
		}
		order[j] = uint8(i)
		k++
	}
	if k == 0 {
		return false
	}
	m := scores[order[0]]
	if !(m >= 1e-30 && m < 1e30) {
		return false
	}
	floor := m * 0.99988
	var cut float32
	for j := 0; ; j++ {
		s, next := scores[order[j]], floor
		if j+1 < k && scores[order[j+1]] > floor {
			next = scores[order[j+1]]
		}
		if s > next*1.00001 {
			cut = s
			break
		}
		if next == floor {
			return false // no gap above floor
		}
	}
	best, scale := float32(0), float32(0)
	var i1, i2, slot int32 = -1, -1, -1
	for i, p := range pos {
		if !(scores[i] >= cut) {
			continue
		}
		if float32(p.sumqx*p.sumqx) > float32(best*p.sumq2) {
			scale = p.sumqx / p.sumq2
			best = scale * p.sumqx
			i1, i2, slot = p.i1, p.i2, p.slot
		}
	}
	if i1 < 0 {
		return false // cannot happen: the first position above the cut passes
	}
	st.best, st.scale, st.i1, st.i2, st.slot = best, scale, i1, i2, slot
	return true
}

// The positions of the iq1_m layout: the 153 splits (i1, i2) of 16 values
// in the reference's order, sixteen per vector, their i1 at
// iq1mTop512Idx[v][0:16] and i2 at [v][16:32] (the padding lanes of the
// last vector repeat (16, 16) and are masked off).
const (
	iq1mTop512Vecs = 10
	iq1mTop512Len  = iq1mTop512Vecs * 64
)

var iq1mTop512Idx = func() (idx [iq1mTop512Vecs][32]int32) {
	p := 0
	for i1 := 0; i1 <= 16; i1++ {
		for i2 := i1; i2 <= 16; i2++ {
			idx[p/16][p%16], idx[p/16][16+p%16] = int32(i1), int32(i2)
			p++
		}
	}
	for ; p < 16*iq1mTop512Vecs; p++ {
		idx[p/16][p%16], idx[p/16][16+p%16] = 16, 16
	}
	return idx
}()

// iq1mSplitSearch512 is the split search of iq1_m (n = 16, the four shift
// combinations in slots 0..3) from each half's prefix sums (index 0 holding
// 0, readable to index 31) with scratch for iq1mTop512Len scores. It
// reports false, st unchanged, where the AVX2 search has to run.
func iq1mSplitSearch512(sx1, sx2, sw1, sw2 *[32]float32, scores []float32, st *splitState) bool {
	scores = scores[:iq1mTop512Len]
	var cand [2 * splitTop512Max]uint64
	nc := iq1mSplitTop512(&sx1[0], &sx2[0], &sw1[0], &sw2[0], &iq1sVals, &iq1mTop512Idx, &scores[0], &cand)
	if nc < 0 {
		return false
	}
	var pos [splitPosMax]splitPos
	np := 0
	for e := 0; e < nc; e++ {
		v, mask := int(cand[2*e]%iq1mTop512Vecs), cand[2*e+1]
		for lanes := uint16(mask | mask>>16 | mask>>32 | mask>>48); lanes != 0; lanes &= lanes - 1 {
			lane := bits.TrailingZeros16(lanes)
			i1, i2 := int(iq1mTop512Idx[v][lane]), int(iq1mTop512Idx[v][16+lane])
			sums := iq1mPositionSums((*[24]float32)(sx1[:24]), (*[24]float32)(sx2[:24]), (*[24]float32)(sw1[:24]), (*[24]float32)(sw2[:24]), i1, i2)
			for k := 0; k < 4; k++ {
				if mask>>(16*k+lane)&1 == 0 {
					continue
				}
				if np == splitPosMax {
					return false
				}
				pos[np] = splitPos{int32(i1), int32(i2), int32(k), sums[k][0], sums[k][1]}
				np++
			}
		}
	}
	return splitSelect(pos[:np], st)
}
