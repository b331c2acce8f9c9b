package trellis

import (
	"math"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// The search reproduces the reference's AVX2 code lane for lane. Scores are
// summed in the order its horizontal adds use. Its eight lanes each keep
// their own best (strictly smaller wins) and are then compared in lane order;
// the winner is therefore the candidate with the smallest score, ties going
// to the lower lane, then to the earlier candidate within the lane.

// hsum8 adds eight lane values the way the reference's horizontal sums do.
func hsum8(s *[8]float32) float32 {
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
}

// laneCandidate4 is the candidate (within a run of eight) in each lane of
// the reference's search over groups of 4, where a register holds two
// codewords: lanes 0..7 cover candidates 0, 2, 4, 6, 1, 3, 5, 7.
var laneCandidate4 = [8]int32{0, 2, 4, 6, 1, 3, 5, 7}

// useBlockSearch selects, with useAVX2, the search of a whole block in one
// assembly call (searchBlock) over the per-group calls; the tests turn it
// off to compare the two.
var useBlockSearch = true

// usePrunedSearch selects, with useAVX2 and useBlockSearch, the pruned
// block search for groups of 8 (prune.go), which scores a fraction of each
// cluster and gives the same codewords; off, the block search scans every
// codeword of the cluster as the reference does. The tests turn it off to
// hold that exhaustive scan to the same bytes.
var usePrunedSearch = true

// usePrunedAVX512 selects, with useBlockAVX512, the AVX-512 pruned search
// for groups of 8 (prune512.go) over the AVX-512 scan and the AVX2 pruned
// search; the tests turn it off to hold those to the same bytes.
var usePrunedAVX512 = true

// usePruned4 and usePruned4AVX2 select, with useBlockAVX512 or useAVX2,
// the pruned searches for groups of 4 (prune4.go) over the AVX-512 and AVX2
// scans; the tests turn them off to hold the scans to the same bytes.
var usePruned4, usePruned4AVX2 = true, true

// useFusedSearch selects, with useBlockAVX512, matchAndScale2's single pass
// over the codewords at two scales; the tests turn it off to hold it to two
// searches.
var useFusedSearch = true

// useFilteredSearch selects, with useFusedSearch, the filtered form of that
// pass (searchFiltered8x2AVX512); the tests turn it off to hold it to the
// pass that scores every codeword.
var useFilteredSearch = true

// findBestMatch chooses, for each group of the 32-weight block xb, the
// codeword nearest (in weighted squared distance) to xb/d and writes its
// index to bestIdx. A zero d gives index 0 everywhere. It reports false
// where a group has no codeword at a finite distance (the values overflow
// the scores, where the reference asserts); its caller then returns
// errNoCodeword.
func (cb *codebook) findBestMatch(d float32, xb, weight []float32, bestIdx []int32) bool {
	_, ok := cb.match(d, xb, weight, bestIdx, nil)
	return ok
}

// matchAndScale is findBestMatch followed by findBestScale; the assembly
// search adds up the scale's sums in the same call. ok is false where
// findBestMatch's is.
func (cb *codebook) matchAndScale(d float32, xb, weight []float32, bestIdx []int32) (scale, score float32, ok bool) {
	var sums [16]float32
	summed, ok := cb.match(d, xb, weight, bestIdx, &sums)
	if summed {
		scale, score = scaleFromSums(hsum8((*[8]float32)(sums[:8])), hsum8((*[8]float32)(sums[8:])))
		return scale, score, true
	}
	if !ok {
		return 0, 0, false
	}
	scale, score = cb.findBestScale(xb, weight, bestIdx)
	return scale, score, true
}

// matchAndScale2 is matchAndScale at d1 into idx1 and at d2 into idx2 for
// scales of the same sign: one pass over the codewords (the filtered
// searchFiltered8x2AVX512, or searchBlock8x2AVX512 where that one hands the
// block over) where the AVX-512 block search can run at both and each group
// falls in the same cluster at both, else two searches. ok is false where
// either search's is (matchAndScale).
func (cb *codebook) matchAndScale2(d1, d2 float32, xb, weight []float32, idx1, idx2 []int32) (scale1, score1, scale2, score2 float32, ok bool) {
	if useAVX2 && useBlockSearch && useBlockAVX512 && useFusedSearch && cb.group == 8 && cb.spans != nil && d1 != 0 && d2 != 0 {
		if p := cb.pairs(); p.spans != nil {
			var sums1, sums2 [16]float32
			x, w := (*[blockSize]float32)(xb), (*[blockSize]float32)(weight)
			i1, i2 := (*[blockSize / 8]int32)(idx1), (*[blockSize / 8]int32)(idx2)
			rc := 3
			if useFilteredSearch {
				if q := cb.pruned16Layout(); q.spans != nil {
					rc = searchFiltered8x2AVX512(&q.pairs[0], &q.ids[0], &q.spans[0], &p.lanes[0], &p.spans[0], &cb.mid, 1/d1, 1/d2, x, w, i1, i2, &cb.values[0], &sums1, &sums2)
				}
			}
			if rc == 3 {
				rc = searchBlock8x2AVX512(&p.lanes[0], &p.spans[0], &cb.mid, 1/d1, 1/d2, x, w, i1, i2, &cb.values[0], &sums1, &sums2)
			}
			if rc == 0 {
				scale1, score1 = scaleFromSums(hsum8((*[8]float32)(sums1[:8])), hsum8((*[8]float32)(sums1[8:])))
				scale2, score2 = scaleFromSums(hsum8((*[8]float32)(sums2[:8])), hsum8((*[8]float32)(sums2[8:])))
				return scale1, score1, scale2, score2, true
			}
		}
	}
	if scale1, score1, ok = cb.matchAndScale(d1, xb, weight, idx1); !ok {
		return 0, 0, 0, 0, false
	}
	if scale2, score2, ok = cb.matchAndScale(d2, xb, weight, idx2); !ok {
		return 0, 0, 0, 0, false
	}
	return scale1, score1, scale2, score2, true
}

// match is findBestMatch, whose result it reports as ok. When it runs the
// block search in assembly and sums is not nil, it also stores there the
// lanes of scaleSumsAVX2 for the chosen codewords and reports summed.
func (cb *codebook) match(d float32, xb, weight []float32, bestIdx []int32, sums *[16]float32) (summed, ok bool) {
	ng := blockSize / cb.group
	if d == 0 {
		clear(bestIdx[:ng])
		return false, true
	}
	id := 1 / d
	if useAVX2 && useBlockSearch && cb.spans != nil && cb.searchBlock(id, xb, weight, bestIdx, sums) {
		return sums != nil, true
	}
	if cb.group == 8 {
		for l := 0; l < ng; l++ {
			var vx [8]float32
			for k := range vx {
				vx[k] = float32(id * xb[8*l+k])
			}
			if bestIdx[l], ok = cb.nearest8(cb.clusterOf(vx[:]), &vx, (*[8]float32)(weight[8*l:8*l+8])); !ok {
				return false, false
			}
		}
		return false, true
	}
	for l := 0; l < ng; l++ {
		var vx [4]float32
		for k := range vx {
			vx[k] = float32(id * xb[4*l+k])
		}
		if bestIdx[l], ok = cb.nearest4(cb.clusterOf(vx[:]), &vx, (*[4]float32)(weight[4*l:4*l+4])); !ok {
			return false, false
		}
	}
	return false, true
}

// searchBlock runs the whole of findBestMatch's search (and, with sums not
// nil, the sums of findBestScale) in one assembly call: for groups of 8 the
// AVX-512 pruned search, else the AVX-512 scan where the clusters are
// small, else the AVX2 pruned search; for groups of 4 the AVX-512 pruned
// search, else the AVX-512 scan, else the AVX2 pruned search; each where it
// is switched on and the inputs are in its range (and, for the pruned
// searches of groups of 4, no group's smallest score is tied), else the
// AVX2 scan. It reports false when a cluster is empty or a search finds
// nothing; the caller then takes the per-group path, which handles those
// cases.
func (cb *codebook) searchBlock(id float32, xb, weight []float32, bestIdx []int32, sums *[16]float32) bool {
	x, w := (*[blockSize]float32)(xb), (*[blockSize]float32)(weight)
	if cb.group == 8 && useBlockAVX512 && usePrunedAVX512 {
		p, q := cb.pairs(), cb.pruned16Layout()
		if p.spans != nil && q.spans != nil && searchPruned8AVX512(&q.pairs[0], &q.boxes[0], &q.ids[0], &q.spans[0], &p.lanes[0], &p.spans[0], &cb.mid, id, x, w, (*[blockSize / 8]int32)(bestIdx), &cb.values[0], sums) == 0 {
			return true
		}
		// Out of the pruned search's range: the exhaustive ones decide.
	}
	if cb.group == 8 && useBlockAVX512 && cb.smallClusters {
		if p := cb.pairs(); p.spans != nil && searchBlock8AVX512(&p.lanes[0], &p.spans[0], &cb.mid, id, x, w, (*[blockSize / 8]int32)(bestIdx), &cb.values[0], sums) == 0 {
			return true
		}
	} else if cb.group == 8 && usePrunedSearch {
		if p := cb.prunedLayout(); p.spans != nil && searchPruned8AVX2(&p.runs[0], &p.boxes[0], &p.ids[0], &p.spans[0], &cb.flatLanes[0], &cb.spans[0], &cb.mid, id, x, w, (*[blockSize / 8]int32)(bestIdx), &cb.values[0], sums) == 0 {
			return true
		}
		// Out of the pruned search's range: the exhaustive one decides.
	}
	if cb.group == 8 {
		return searchBlock8AVX2(&cb.flatLanes[0], &cb.spans[0], &cb.mid, id, x, w, (*[blockSize / 8]int32)(bestIdx), &cb.values[0], sums) == 0
	}
	if useBlockAVX512 && usePruned4 {
		if q := cb.pruned4Layout(); q.spans != nil && searchPruned4AVX512(&q.pairs[0], &q.boxes[0], &q.ids[0], &q.spans[0], id, x, w, (*[blockSize / 4]int32)(bestIdx), sums) == 0 {
			return true
		}
		// A tie, or out of the pruned search's range: the scans decide.
	}
	if useBlockAVX512 {
		if p := cb.pairs(); p.spans != nil && searchBlock4AVX512(&p.lanes[0], &p.spans[0], id, x, w, (*[blockSize / 4]int32)(bestIdx), &cb.values[0], sums) == 0 {
			return true
		}
		// Out of the AVX-512 search's range: the AVX2 one decides.
	}
	if usePruned4AVX2 {
		if q := cb.pruned4Layout(); q.spans != nil && searchPruned4AVX2(&q.pairs[0], &q.boxes[0], &q.ids[0], &q.spans[0], id, x, w, (*[blockSize / 4]int32)(bestIdx), sums) == 0 {
			return true
		}
	}
	return searchBlock4AVX2(&cb.flatLanes[0], &cb.spans[0], id, x, w, (*[blockSize / 4]int32)(bestIdx), &cb.values[0], sums) == 0
}

// nearest8 returns the index of the codeword of cluster c (of all codewords
// if c is empty) nearest to vx in distance weighted by w, using the AVX2
// search where the CPU has it. ok is false where no score is below infinity
// (the values overflow the scores), where the reference stops with an
// assertion.
func (cb *codebook) nearest8(c int, vx, w *[8]float32) (j int32, ok bool) {
	if useAVX2 {
		lanes := cb.lanes[c]
		if len(lanes) == 0 {
			lanes = cb.allLanes
		}
		var best [8]float32
		var index [8]int32
		nearest8AVX2(&lanes[0], len(lanes)/laneRun(8), vx, w, &best, &index)
		j = reduceLanes(&best, &index)
	} else {
		p := cb.portableLanes()
		fl := p[c]
		if len(fl.ids) == 0 {
			fl = p[len(p)-1]
		}
		_, j = nearest8Go(fl.values, fl.ids, vx, w)
	}
	return j, j >= 0
}

// nearest4 is nearest8 for groups of 4, where the reference requires the
// cluster to have codewords.
func (cb *codebook) nearest4(c int, vx, w *[4]float32) (j int32, ok bool) {
	if len(cb.inCluster[c]) == 0 {
		panic("trellis: empty codebook cluster")
	}
	if useAVX2 {
		lanes := cb.lanes[c]
		var best [8]float32
		var index [8]int32
		nearest4AVX2(&lanes[0], len(lanes)/laneRun(4), vx, w, &best, &index)
		j = reduceLanes(&best, &index)
	} else {
		fl := cb.portableLanes()[c]
		_, j = nearest4Go(fl.values, fl.ids, vx, w)
	}
	return j, j >= 0
}

// reduceLanes picks the winner of the eight lanes' bests as the reference
// does: the smallest score, the lower lane on a tie.
func reduceLanes(best *[8]float32, index *[8]int32) int32 {
	b, j := float32(math.Inf(1)), int32(-1)
	for i := range best {
		if best[i] < b {
			b, j = best[i], index[i]
		}
	}
	return j
}

// nearest8Go is the portable search over groups of 8 (in floatLanes
// layout) and the reference for the assembly one. It returns the winning
// score and codeword index (-1 if no score is below infinity). Scores are
// summed in the order of the reference's horizontal adds. The reference's
// winner is the smallest score, ties going to the lower lane, then to the
// earlier candidate within the lane (each lane keeps its first strict
// minimum). That depends only on the candidates with the smallest score, so
// a candidate is dropped as soon as the first half of its score (a lower
// bound: the terms are not negative and rounding is monotonic) exceeds the
// best score so far.
func nearest8Go(values []float32, ids []int32, vx, w *[8]float32) (float32, int32) {
	best, bestLane, jbest := float32(math.Inf(1)), 8, int32(-1)
	w0, w1, w2, w3, w4, w5, w6, w7 := w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]
	x0, x1, x2, x3, x4, x5, x6, x7 := vx[0], vx[1], vx[2], vx[3], vx[4], vx[5], vx[6], vx[7]
	for b := 0; b < len(values)/64 && b < len(ids)/8; b++ {
		blk := (*[64]float32)(values[64*b : 64*b+64])
		id := (*[8]int32)(ids[8*b : 8*b+8])
		for i := 0; i < 8; i++ {
			d0, d4, d2, d6 := blk[i]-x0, blk[32+i]-x4, blk[16+i]-x2, blk[48+i]-x6
			a := float32(float32(w0*float32(d0*d0))+float32(w4*float32(d4*d4))) +
				float32(float32(w2*float32(d2*d2))+float32(w6*float32(d6*d6)))
			if a > best {
				continue
			}
			d1, d5, d3, d7 := blk[8+i]-x1, blk[40+i]-x5, blk[24+i]-x3, blk[56+i]-x7
			score := a + float32(float32(float32(w1*float32(d1*d1))+float32(w5*float32(d5*d5)))+
				float32(float32(w3*float32(d3*d3))+float32(w7*float32(d7*d7))))
			if score < best || score == best && jbest >= 0 && i < bestLane {
				best, bestLane, jbest = score, i, id[i]
			}
		}
	}
	return best, jbest
}

// nearest4Go is nearest8Go for groups of 4.
func nearest4Go(values []float32, ids []int32, vx, w *[4]float32) (float32, int32) {
	best, bestLane, jbest := float32(math.Inf(1)), 8, int32(-1)
	w0, w1, w2, w3 := w[0], w[1], w[2], w[3]
	x0, x1, x2, x3 := vx[0], vx[1], vx[2], vx[3]
	for b := 0; b < len(values)/32 && b < len(ids)/8; b++ {
		blk := (*[32]float32)(values[32*b : 32*b+32])
		id := (*[8]int32)(ids[8*b : 8*b+8])
		for i := 0; i < 8; i++ {
			d0, d2 := blk[i]-x0, blk[16+i]-x2
			a := float32(w0*float32(d0*d0)) + float32(w2*float32(d2*d2))
			if a > best {
				continue
			}
			d1, d3 := blk[8+i]-x1, blk[24+i]-x3
			score := a + float32(float32(w1*float32(d1*d1))+float32(w3*float32(d3*d3)))
			if score < best || score == best && jbest >= 0 && i < bestLane {
				best, bestLane, jbest = score, i, id[i]
			}
		}
	}
	return best, jbest
}

// findBestScale returns the weighted least-squares scale of the codewords
// bestIdx for xb and the error reduction it achieves (sumqx²/sumq2).
func (cb *codebook) findBestScale(xb, weight []float32, bestIdx []int32) (scale, score float32) {
	var sumqx, sumq2 float32
	if useAVX2 {
		var q [blockSize]float32
		if cb.group == 8 {
			for l := 0; l < blockSize/8; l++ {
				*(*[8]float32)(q[8*l:]) = *(*[8]float32)(cb.values[8*int(bestIdx[l]):])
			}
		} else {
			for l := 0; l < blockSize/4; l++ {
				*(*[4]float32)(q[4*l:]) = *(*[4]float32)(cb.values[4*int(bestIdx[l]):])
			}
		}
		var sums [16]float32
		scaleSumsAVX2(&q, (*[blockSize]float32)(xb), (*[blockSize]float32)(weight), &sums)
		sumqx, sumq2 = hsum8((*[8]float32)(sums[:8])), hsum8((*[8]float32)(sums[8:]))
	} else {
		var tie uint32
		sumqx, sumq2, tie = cb.scaleSums(xb, weight, bestIdx, false)
		if tie != 0 {
			sumqx, sumq2, _ = cb.scaleSums(xb, weight, bestIdx, true)
		}
	}
	return scaleFromSums(sumqx, sumq2)
}

// scaleFromSums is findBestScale's result from its two sums.
func scaleFromSums(sumqx, sumq2 float32) (scale, score float32) {
	if sumq2 > 0 {
		return sumqx / sumq2, float32(sumqx*sumqx) / sumq2
	}
	return 0, 0
}

// scaleSums adds up q*w*x and q*w*q in eight lanes, as the reference's AVX2
// code does with fused multiply-adds, then across the lanes. With exact
// false it uses fmaFast and reports a tie.
func (cb *codebook) scaleSums(xb, weight []float32, bestIdx []int32, exact bool) (sumqx, sumq2 float32, tie uint32) {
	var vqx, vq2 [8]float32
	g := cb.group
	xb, weight = xb[:blockSize], weight[:blockSize]
	for l := 0; l < blockSize; l += 8 {
		for k := 0; k < 8; k++ {
			p := l + k
			q := cb.values[g*int(bestIdx[p/g])+p%g]
			qw := float32(q * weight[p])
			if exact {
				vqx[k] = kernel.FMA32(qw, xb[p], vqx[k])
				vq2[k] = kernel.FMA32(qw, q, vq2[k])
				continue
			}
			var t1, t2 uint32
			vqx[k], t1 = fmaFast(qw, xb[p], vqx[k])
			vq2[k], t2 = fmaFast(qw, q, vq2[k])
			tie |= t1 | t2
		}
	}
	return hsum8(&vqx), hsum8(&vq2), tie
}
