package iqk

import (
	"math"

	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// iq2_kl quantizes pairs of weights to one of 32 points of the 8x8 product
// of the iq3 grid with itself (5 bits per pair). A pair is first rounded
// coordinate-wise on the iq3 grid; when that product point is not one of the
// 32, the nearest of a fixed list of 8 candidates is taken.

// iq2klIndex maps 8*i1+i2 (indices into the plain iq3 grid) to the pair grid
// point, or to -1-n where n indexes iq2klNeighbours.
var iq2klIndex = [64]int8{
	-1, -2, 0, -3, -4, 1, -5, -6, 2, -7, -8, 3, -9, 4, -10, 5, -11, 6, 7, -12, 8, 9, 10, -13, 11, -14, -15, -16, 12, 13, -17,
	14, -18, -19, 15, 16, 17, 18, 19, -20, -21, 20, 21, 22, 23, 24, -22, -23, 25, -24, 26, -25, 27, -26, 28, 29, -27, -28, 30, -29, -30, 31, -31, -32,
}

// iq2klNeighbours lists, for each product point outside the grid, the grid
// points searched in this order.
var iq2klNeighbours = [32][8]uint8{
	{2, 0, 6, 11, 7, 3, 8, 15}, {0, 2, 3, 6, 7, 1, 8, 4}, {0, 1, 3, 4, 8, 7, 9, 6}, {1, 0, 3, 4, 8, 9, 7, 10},
	{1, 4, 5, 10, 9, 3, 8, 0}, {5, 1, 4, 10, 9, 14, 8, 3}, {6, 2, 7, 0, 3, 11, 8, 15}, {3, 7, 0, 6, 8, 4, 12, 9},
	{3, 4, 8, 9, 1, 7, 12, 10}, {4, 10, 5, 9, 1, 8, 13, 14}, {11, 2, 6, 7, 20, 15, 25, 21}, {8, 7, 3, 12, 9, 16, 17, 13},
	{14, 5, 10, 19, 9, 13, 4, 18}, {6, 15, 7, 11, 20, 21, 16, 2}, {15, 7, 16, 6, 21, 12, 17, 22}, {12, 16, 17, 8, 15, 7, 13, 22},
	{19, 10, 13, 18, 14, 9, 12, 24}, {11, 20, 25, 6, 15, 2, 21, 7}, {20, 15, 21, 6, 11, 7, 16, 26}, {14, 19, 29, 10, 28, 18, 13, 24},
	{25, 11, 20, 21, 15, 6, 26, 30}, {19, 24, 28, 18, 29, 23, 13, 17}, {29, 19, 14, 28, 24, 18, 10, 13}, {20, 26, 21, 25, 30, 15, 22, 16},
	{27, 26, 22, 23, 21, 30, 16, 24}, {27, 24, 28, 31, 23, 18, 22, 17}, {25, 30, 20, 26, 21, 11, 15, 22}, {30, 26, 25, 20, 21, 27, 22, 15},
	{30, 27, 31, 26, 22, 23, 21, 24}, {31, 27, 30, 26, 28, 23, 22, 24}, {31, 28, 29, 27, 24, 23, 19, 18}, {29, 28, 31, 24, 19, 27, 14, 18},
}

// iq2klGrid holds the two coordinates of each pair grid point, built from
// iq2klIndex (the same points as tables.IQ2KLValues, checked by a test).
var iq2klGrid = func() (g [32][2]float32) {
	for j, i := range iq2klIndex {
		if i >= 0 {
			g[i] = [2]float32{float32(tables.IQ3NLValues[j/8]), float32(tables.IQ3NLValues[j%8])}
		}
	}
	return
}()

// iq2klBest returns the pair grid point for (x1, x2) at inverse scale id.
// ok is false where the pair is off the grid and no neighbour scores below
// MaxFloat32 (the values overflow the scores; the reference asserts there).
func iq2klBest(id, x1, x2, w1, w2 float32) (best int, ok bool) {
	sx1, sx2 := id*x1, id*x2
	i := int(iq2klIndex[(8*grid3.plain.best(sx1)+grid3.plain.best(sx2))&63])
	if i >= 0 {
		return i, true
	}
	bestScore := float32(math.MaxFloat32)
	ibest := -1
	for _, n := range &iq2klNeighbours[-i-1] {
		diff1 := iq2klGrid[n][0] - sx1
		diff2 := iq2klGrid[n][1] - sx2
		if score := kernel.FMA32(w1*diff1, diff1, mul(w2*diff2, diff2)); score < bestScore {
			bestScore, ibest = score, int(n)
		}
	}
	return ibest, ibest >= 0
}

// errIQ2KLNoNeighbour is quantizeIQ2KL's error where iq2klBest finds no
// neighbour (see kernel.OverflowError).
var errIQ2KLNoNeighbour = &kernel.OverflowError{Cause: "iqk: iq2_kl pair without a grid neighbour at a finite distance"}

// iq2klSums accumulates sum w*q*x and sum w*q^2 over a block for the
// assignment at inverse scale id (pairs summed first, as the reference).
// ok is false where a pair has no neighbour (iq2klBest).
func iq2klSums(xb, weight []float32, id float32) (sumqx, sumq2 float32, ok bool) {
	if useIQ2KLSumsFMA {
		if sumqx, sumq2, ok := iq2klSumsAsm(xb, weight, id, nil); ok {
			return sumqx, sumq2, true
		}
	}
	return iq2klSumsGo(xb, weight, id)
}

// iq2klSumsGo is the portable iq2klSums, the reference for the assembly one.
func iq2klSumsGo(xb, weight []float32, id float32) (sumqx, sumq2 float32, ok bool) {
	for j := 0; j < len(xb); j += 2 {
		w1, w2 := weight[j], weight[j+1]
		i, found := iq2klBest(id, xb[j], xb[j+1], w1, w2)
		if !found {
			return 0, 0, false
		}
		g := &iq2klGrid[i]
		q1, q2 := g[0], g[1]
		sumqx += kernel.FMA32(w1*q1, xb[j], mul(w2*q2, xb[j+1]))
		sumq2 += kernel.FMA32(w1*q1, q1, mul(w2*q2, q2))
	}
	return sumqx, sumq2, true
}

// iq2klAssign sets idx[j] to iq2klBest of pair j of the 32-weight block xb
// at inverse scale id; false where a pair has no neighbour.
func iq2klAssign(idx *[16]int32, xb, weight []float32, id float32) bool {
	if useIQ2KLSumsFMA {
		if _, _, ok := iq2klSumsAsm(xb, weight, id, idx); ok {
			return true
		}
	}
	for j := range idx {
		i, ok := iq2klBest(id, xb[2*j], xb[2*j+1], weight[2*j], weight[2*j+1])
		if !ok {
			return false
		}
		idx[j] = int32(i)
	}
	return true
}

// iq2klWeights fills the weights of one block: with importance weights,
// qw*sqrt(sigma2 + x^2); else |x|. The reference writes sqrt, not sqrtf,
// but ggml-impl.h includes <math.h>, whose C++ wrapper brings the float
// overload std::sqrt(float) into scope, so the root is a float one. (The
// golden data does not tell the two apart.)
func iq2klWeights(weight, xb, qw []float32, sigma2 float32) {
	if qw != nil {
		kernel.ImatrixWeights(weight, xb, qw, sigma2, useWeightsAVX2)
		return
	}
	for j := range xb {
		weight[j] = abs32(xb[j])
	}
}

// quantizeIQ2KL quantizes one iq2_kl row: an fp16 row scale, then per 256
// weights 6-bit block scales (2 high bits in scales_h), 4 low bits of each
// pair index in qs and the fifth bit in qh. It returns errIQ2KLNoNeighbour
// where the values overflow its pair searches.
func quantizeIQ2KL(y []byte, x, qwRow []float32) error {
	const bs, sbs, blockBytes, ntry = 32, 256, 86, 5
	const sigmaFactor = 2.25 / sbs
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	var weight [bs]float32
	blocks := y[2:]
	clear(blocks)
	var maxScale, maxAbsScale float32
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		sigma2 := sumSquares(xbl) * sigmaFactor
		for ib := 0; ib < sbs/bs; ib++ {
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			iq2klWeights(weight[:], xb, qw, sigma2)
			amax, maxv := absMax(xb)
			if amax < 1e-16 {
				scales[ibl*8+ib] = 0
				continue
			}
			d, ok := iq2klBlockScale(xb, weight[:], maxv, amax)
			if !ok {
				return errIQ2KLNoNeighbour
			}
			scales[ibl*8+ib] = d
			if a := abs32(d); a > maxAbsScale {
				maxAbsScale, maxScale = a, d
			}
		}
	}
	if maxAbsScale == 0 {
		put16(y, fp16(0))
		return nil
	}
	d := -maxScale / 32
	id := 1 / d
	var sumqx, sumq2 float32
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		blk := blocks[ibl*blockBytes : (ibl+1)*blockBytes]
		scalesL, qs, qh := blk[2:6], blk[6:70], blk[70:86]
		var scalesH uint16
		sigma2 := sumSquares(xbl) * sigmaFactor
		for ib := 0; ib < sbs/bs; ib++ {
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			iq2klWeights(weight[:], xb, qw, sigma2)
			ls := clamp(kernel.NearestIntMul(id, scales[ibl*8+ib]), -32, 31)
			bestScore := float32(math.MaxFloat32)
			bestLs := ls
			for ils := max(-32, ls-1); ils <= min(31, ls+1); ils++ {
				dl := d * float32(ils)
				var idl float32
				if dl != 0 {
					idl = 1 / dl
				}
				var score float32
				var idx [bs / 2]int32
				if !iq2klAssign(&idx, xb, weight[:], idl) {
					return errIQ2KLNoNeighbour
				}
				if useIQ2KLSumsFMA {
					score = iq2klScore(xb, weight[:], &idx, dl)
				} else {
					score = iq2klScoreGo(xb, weight[:], &idx, dl)
				}
				if score < bestScore {
					bestScore, bestLs = score, ils
				}
			}
			ls = bestLs
			uls := ls + 32
			scalesL[ib%4] |= byte((uls & 0xf) << (4 * (ib / 4)))
			scalesH |= uint16(uls>>4) << (2 * ib)
			if ls == 0 {
				continue
			}
			dl := d * float32(ls)
			idl := 1 / dl
			var pairIdx [bs / 2]int32
			if !iq2klAssign(&pairIdx, xb, weight[:], idl) {
				return errIQ2KLNoNeighbour
			}
			for j := 0; j < bs/2; j++ {
				w1, w2 := weight[2*j], weight[2*j+1]
				idx := int(pairIdx[j] & 31)
				qs[16*(ib/2)+j] |= byte((idx & 0xf) << (4 * (ib % 2)))
				qh[j] |= byte((idx >> 4) << ib)
				q1 := float32(ls) * iq2klGrid[idx][0]
				q2 := float32(ls) * iq2klGrid[idx][1]
				sumqx += kernel.FMA32(w1*q1, xb[2*j], mul(w2*q2, xb[2*j+1]))
				sumq2 += kernel.FMA32(w1*q1, q1, mul(w2*q2, q2))
			}
		}
		put16(blk, scalesH)
	}
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	put16(y, fp16(1.025*d))
	return nil
}

// iq2klTrials is the number of trial scales per block; each is tried with
// +id and -id.
const iq2klTrials = 1 + 2*5 + 1

// iq2klTrialIDs returns the inverse scales the block search tries, in
// order: the first estimate, then (itry+values[0])/maxv for itry -5..5,
// each followed by its negation.
func iq2klTrialIDs(ids *[2 * iq2klTrials]float32, maxv float32) {
	v0 := float32(tables.IQ3NLValues[0])
	d := -maxv / v0
	id := 1 / d
	ids[0], ids[1] = id, -id
	for itry := -5; itry <= 5; itry++ {
		id = float32(itry+int(tables.IQ3NLValues[0])) / maxv
		m := 2 * (itry + 6)
		ids[m], ids[m+1] = id, -id
	}
}

// iq2klBlockScale is the scale search of one 32-weight block: the best of
// the least-squares scales of every trial assignment. ok is false where a
// pair has no neighbour (iq2klBest).
func iq2klBlockScale(xb, weight []float32, maxv, amax float32) (scale float32, ok bool) {
	var ids [2 * iq2klTrials]float32
	iq2klTrialIDs(&ids, maxv)
	var sums [2][2 * iq2klTrials]float32
	if !(useIQ2KLLanes && iq2klLaneSums(xb, weight, &ids, amax, &sums)) {
		for m, id := range &ids {
			if sums[0][m], sums[1][m], ok = iq2klSums(xb, weight, id); !ok {
				return 0, false
			}
		}
	}
	return iq2klWalk(&sums), true
}

// iq2klWalk picks the best scale from the trial sums (sums[0] = sum w*q*x,
// sums[1] = sum w*q^2, in iq2klTrialIDs order) as the reference does.
func iq2klWalk(sums *[2][2 * iq2klTrials]float32) float32 {
	sqxP, sq2P, sqxM, sq2M := sums[0][0], sums[1][0], sums[0][1], sums[1][1]
	d := sqxP / sq2P
	best := d * sqxP
	if sq2M > 0 && sqxM*sqxM > best*sq2M {
		d = sqxM / sq2M
		best = d * sqxM
	}
	for m := 2; m < 2*iq2klTrials; m += 2 {
		sqxP, sq2P, sqxM, sq2M = sums[0][m], sums[1][m], sums[0][m+1], sums[1][m+1]
		if sq2P > 0 && sqxP*sqxP > best*sq2P {
			d = sqxP / sq2P
			best = d * sqxP
		}
		if sq2M > 0 && sqxM*sqxM > best*sq2M {
			d = sqxM / sq2M
			best = d * sqxM
		}
	}
	return d
}

// iq2klScoreGo is the weighted squared error of the 16 pairs of a block at
// pair grid points idx and scale dl, the reference for iq2klScore.
func iq2klScoreGo(xb, weight []float32, idx *[16]int32, dl float32) (score float32) {
	for j := 0; j < 32; j += 2 {
		w1, w2 := weight[j], weight[j+1]
		g := &iq2klGrid[idx[j/2]&31]
		diff1 := kernel.FMA32(dl, g[0], -xb[j])
		diff2 := kernel.FMA32(dl, g[1], -xb[j+1])
		score += kernel.FMA32(w1*diff1, diff1, mul(w2*diff2, diff2))
	}
	return score
}
