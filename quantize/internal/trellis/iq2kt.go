package trellis

import (
	"encoding/binary"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"math"
	"slices"
	"sync"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/tables"
)

var iq2ktBook = sync.OnceValue(func() *codebook {
	return newCodebook(8, 16, false, formats.KTOffset, 256, 8)
})

// rowScratch holds the per-row work arrays of the trellis quantizers.
type rowScratch struct {
	scales  []float32 // one per block
	weights []float32 // one per weight
	idx     []int32   // one codeword index per group
	qtmp    []float32 // iq3_kt: chosen codeword values (the others: scratch)
	wx      []float32 // the row-scale fit's w*x products
	dls     []float32 // the row-scale fit's block scales, fitLanes per block
}

func newRowScratch(ne0, group int) *rowScratch {
	return &rowScratch{
		scales:  make([]float32, ne0/blockSize),
		weights: make([]float32, ne0),
		idx:     make([]int32, ne0/group),
		qtmp:    make([]float32, ne0),
		wx:      make([]float32, ne0),
		dls:     make([]float32, ne0/blockSize*fitLanes),
	}
}

// sigma2Scale is the spread factor of the weights of all four types.
const sigma2Scale = 2.0

// quantizeRowIQ2KT: float32 row scale, then per super-block four bytes of
// 4-bit non-linear block scales and 32 16-bit codeword indices.
//
// Each block first gets its own scale (two trial searches, one per sign);
// the row scale and the block scale indices are then fitted to those; a
// final search with the quantized block scales keeps, per block, whichever
// of the old and new index sets has the smaller error, and the row scale is
// refitted to the result.
func quantizeRowIQ2KT(dst []byte, x, imatrix []float32, sc *rowScratch) error {
	cb := iq2ktBook()
	const ng = blockSize / 8
	nblock := len(x) / superBlock
	y := dst[4:]
	allScales, allWeights, allIdx := sc.scales, sc.weights, sc.idx
	setWeights(sigma2Scale, x, imatrix, allWeights, true)
	amaxRow := rowAbsMax(x)

	var bestIdx [2 * ng]int32
	var amaxScale, maxScale float32
	for ibl := 0; ibl < nblock; ibl++ {
		clear(y[68*ibl : 68*ibl+68])
		for ib := 0; ib < 8; ib++ {
			o := ibl*superBlock + ib*blockSize
			xb, weight := x[o:o+blockSize], allWeights[o:o+blockSize]
			amax := rowAbsMax(xb)
			gi := o / 8
			if amax < 1e-16 {
				allScales[ibl*8+ib] = 0
				clear(allIdx[gi : gi+ng])
				continue
			}
			scale0 := maxF(90, float32(124*amax)/amaxRow)
			dp, scoreP, okP := cb.matchAndScale(amax/scale0, xb, weight, bestIdx[:ng])
			if !okP {
				return errNoCodeword
			}
			dm, scoreM, okM := cb.matchAndScale(-amax/scale0, xb, weight, bestIdx[ng:])
			if !okM {
				return errNoCodeword
			}
			idx := bestIdx[:ng]
			if scoreP > scoreM {
				allScales[ibl*8+ib] = dp
			} else {
				allScales[ibl*8+ib] = dm
				idx = bestIdx[ng:]
			}
			copy(allIdx[gi:gi+ng], idx)
			if a := abs32(allScales[ibl*8+ib]); a > amaxScale {
				amaxScale, maxScale = a, allScales[ibl*8+ib]
			}
		}
	}
	if maxScale == 0 {
		binary.LittleEndian.PutUint32(dst, 0)
		return nil
	}

	d := fitRowScale(x, allWeights, allScales, allIdx, cb, maxScale, sc)
	id := float32(0)
	if d != 0 {
		id = 1 / d
	}
	for ibl := 0; ibl < nblock; ibl++ {
		for ib := 0; ib < 4; ib++ {
			ls1 := bestIndexIQ4NL(float32(id * allScales[ibl*8+ib]))
			ls2 := bestIndexIQ4NL(float32(id * allScales[ibl*8+ib+4]))
			y[68*ibl+ib] = uint8(ls1 | ls2<<4)
		}
	}
	binary.LittleEndian.PutUint32(dst, math.Float32bits(d))
	if d == 0 {
		return nil
	}

	var sumqx, sumq2 float32
	for ibl := 0; ibl < nblock; ibl++ {
		blk := y[68*ibl : 68*ibl+68]
		for ib := 0; ib < 8; ib++ {
			o := ibl*superBlock + ib*blockSize
			xb, weight := x[o:o+blockSize], allWeights[o:o+blockSize]
			ls := float32(tables.KTScaleValues[blk[ib%4]>>(4*(ib/4))&0xf])
			dl := float32(d * ls)
			if !cb.findBestMatch(dl, xb, weight, bestIdx[:ng]) {
				return errNoCodeword
			}
			prev := allIdx[o/8 : o/8+ng]
			keepPrevious(cb, dl, xb, weight, prev, bestIdx[:ng])
			for j := 0; j < ng; j++ {
				binary.LittleEndian.PutUint16(blk[4+2*(ib*ng+j):], uint16(bestIdx[j]))
				sumqx, sumq2 = accumulateFit(cb, bestIdx[j], ls, xb[8*j:8*j+8], weight[8*j:8*j+8], sumqx, sumq2)
			}
		}
	}
	if sumq2 > 0 {
		binary.LittleEndian.PutUint32(dst, math.Float32bits(sumqx/sumq2))
	}
	return nil
}

// fitRowScale searches the row scale (19 trials around maxScale/-127) that
// best fits the block scales, quantized to tables.KTScaleValues, with the
// chosen codewords.
func fitRowScale(x, w, scales []float32, idx []int32, cb *codebook, maxScale float32, sc *rowScratch) float32 {
	v0 := float32(tables.KTScaleValues[0])
	d := maxScale / v0
	var best float32
	var lanes *[2 * fitLanes]float32
	if useAVX2 {
		// All 19 trials at once, one per vector lane.
		g := cb.group
		for i := range x {
			sc.wx[i] = float32(w[i] * x[i])
		}
		for ig := range len(x) / g {
			copy(sc.qtmp[ig*g:ig*g+g], cb.values[g*int(idx[ig]):])
		}
		dls := sc.dls[:len(scales)*fitLanes]
		for ib, s := range scales {
			for t := 0; t < 19; t++ {
				id := float32(t-9+int(tables.KTScaleValues[0])) / maxScale
				dls[ib*fitLanes+t] = float32(tables.KTScaleValues[bestIndexIQ4NL(float32(id*s))])
			}
		}
		lanes = new([2 * fitLanes]float32)
		fitTrials(sc.wx, w, sc.qtmp, dls, true, lanes)
	}
	for itry := -9; itry <= 9; itry++ {
		var sumqx, sumq2 float32
		if lanes != nil {
			sumqx, sumq2 = lanes[itry+9], lanes[fitLanes+itry+9]
		} else {
			id := float32(itry+int(tables.KTScaleValues[0])) / maxScale
			var tie uint32
			sumqx, sumq2, tie = fitSums(x, w, scales, idx, cb, id, false)
			if tie != 0 {
				sumqx, sumq2, _ = fitSums(x, w, scales, idx, cb, id, true)
			}
		}
		if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
			d = sumqx / sumq2
			best = float32(d * sumqx)
		}
	}
	return d
}

// fitSums adds up w*x*q and w*q*q over the row for one trial inverse row
// scale id, in the reference's order with fused multiply-adds. With exact
// false it uses fmaFast and reports a tie.
func fitSums(x, w, scales []float32, idx []int32, cb *codebook, id float32, exact bool) (sumqx, sumq2 float32, tie uint32) {
	g := cb.group
	for ib := range scales {
		dl := float32(tables.KTScaleValues[bestIndexIQ4NL(float32(id*scales[ib]))])
		xb, wb := x[ib*blockSize:(ib+1)*blockSize], w[ib*blockSize:(ib+1)*blockSize]
		for ig := 0; ig < blockSize/g; ig++ {
			qb := cb.values[g*int(idx[(ib*blockSize)/g+ig]):]
			qb = qb[:g]
			for j, v := range qb {
				jj := ig*g + j
				q := float32(dl * v)
				if exact {
					sumqx = kernel.FMA32(float32(wb[jj]*xb[jj]), q, sumqx)
					sumq2 = kernel.FMA32(float32(wb[jj]*q), q, sumq2)
					continue
				}
				var t1, t2 uint32
				sumqx, t1 = fmaFast(float32(wb[jj]*xb[jj]), q, sumqx)
				sumq2, t2 = fmaFast(float32(wb[jj]*q), q, sumq2)
				tie |= t1 | t2
			}
		}
	}
	return sumqx, sumq2, tie
}

// keepPrevious compares the weighted error of the previous and the new
// codewords of a block at block scale dl: the new ones win ties and replace
// prev; otherwise the previous ones are copied back into best.
func keepPrevious(cb *codebook, dl float32, xb, weight []float32, prev, best []int32) {
	if slices.Equal(prev, best) {
		// Equal errors: the reference copies best over prev, a no-op.
		return
	}
	g := cb.group
	var mse1, mse2 float32
	for ig := range prev {
		q1 := cb.values[g*int(prev[ig]):]
		q2 := cb.values[g*int(best[ig]):]
		for j := 0; j < g; j++ {
			jj := ig*g + j
			diff1 := kernel.FMA32(-dl, q1[j], xb[jj])
			diff2 := kernel.FMA32(-dl, q2[j], xb[jj])
			mse1 = kernel.FMA32(float32(weight[jj]*diff1), diff1, mse1)
			mse2 = kernel.FMA32(float32(weight[jj]*diff2), diff2, mse2)
		}
	}
	if mse1 < mse2 {
		copy(best, prev)
	} else {
		copy(prev, best)
	}
}

// accumulateFit adds one group's contribution to the row-scale refit.
func accumulateFit(cb *codebook, idx int32, ls float32, xl, wl []float32, sumqx, sumq2 float32) (float32, float32) {
	g := cb.group
	ql := cb.values[g*int(idx) : g*int(idx)+g]
	for k, v := range ql {
		q := float32(v * ls)
		sumqx = kernel.FMA32(float32(wl[k]*xl[k]), q, sumqx)
		sumq2 = kernel.FMA32(float32(wl[k]*q), q, sumq2)
	}
	return sumqx, sumq2
}
