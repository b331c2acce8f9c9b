package trellis

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/tables"
)

// iq1_kt uses 13-bit indices into a codebook of 8192 eight-value codewords.
var iq1ktBook = sync.OnceValue(func() *codebook {
	return newCodebook(8, 13, false, formats.KTOffset, 256, 32)
})

// quantizeRowIQ1KT: float32 row scale, then per super-block sh[8] (4-bit
// non-linear block scale, and in bits 4..7 the 13th index bit of the
// block's four groups), ql[32] (index bits 0..7) and qh[16] (bits 8..11).
//
// As iq2_kt, with a second pair of trial searches per block at a smaller
// starting scale and the refitted row scale stored 7% larger.
func quantizeRowIQ1KT(dst []byte, x, imatrix []float32, sc *rowScratch) error {
	cb := iq1ktBook()
	const ng = blockSize / 8
	nblock := len(x) / superBlock
	y := dst[4:]
	allScales, allWeights, allIdx := sc.scales, sc.weights, sc.idx
	setWeights(sigma2Scale, x, imatrix, allWeights, true)
	amaxRow := rowAbsMax(x)

	var bestIdx [4 * ng]int32 // at +scale0, -scale0, +scale1, -scale1
	var amaxScale, maxScale float32
	for ibl := 0; ibl < nblock; ibl++ {
		clear(y[56*ibl : 56*ibl+56])
		for ib := 0; ib < 8; ib++ {
			o := ibl*superBlock + ib*blockSize
			xb, weight := x[o:o+blockSize], allWeights[o:o+blockSize]
			amax := rowAbsMax(xb)
			gi := o / 8
			scale := &allScales[ibl*8+ib]
			if amax < 1e-16 {
				*scale = 0
				clear(allIdx[gi : gi+ng])
				continue
			}
			scale0 := maxF(90, float32(124*amax)/amaxRow)
			scale1 := scale0 - 8
			// The four trial searches, two scales of each sign at a time.
			dp, scoreP, dp1, scoreP1, okP := cb.matchAndScale2(amax/scale0, amax/scale1, xb, weight, bestIdx[:ng], bestIdx[2*ng:3*ng])
			if !okP {
				return errNoCodeword
			}
			dm, scoreM, dm1, scoreM1, okM := cb.matchAndScale2(-amax/scale0, -amax/scale1, xb, weight, bestIdx[ng:2*ng], bestIdx[3*ng:])
			if !okM {
				return errNoCodeword
			}
			idx := bestIdx[:ng]
			if scoreP > scoreM {
				*scale = dp
			} else {
				*scale, scoreP = dm, scoreM
				idx = bestIdx[ng : 2*ng]
			}
			copy(allIdx[gi:gi+ng], idx)

			if scoreP1 > scoreP || scoreM1 > scoreP {
				idx = bestIdx[2*ng : 3*ng]
				if scoreP1 > scoreM1 {
					*scale = dp1
				} else {
					*scale = dm1
					idx = bestIdx[3*ng:]
				}
				copy(allIdx[gi:gi+ng], idx)
			}
			if a := abs32(*scale); a > amaxScale {
				amaxScale, maxScale = a, *scale
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
		for ib := 0; ib < 8; ib++ {
			y[56*ibl+ib] = uint8(bestIndexIQ4NL(float32(id * allScales[ibl*8+ib])))
		}
	}
	binary.LittleEndian.PutUint32(dst, math.Float32bits(d))
	if d == 0 {
		return nil
	}

	var sumqx, sumq2 float32
	for ibl := 0; ibl < nblock; ibl++ {
		blk := y[56*ibl : 56*ibl+56]
		sh, ql, qh := blk[:8], blk[8:40], blk[40:56]
		for ib := 0; ib < 8; ib++ {
			o := ibl*superBlock + ib*blockSize
			xb, weight := x[o:o+blockSize], allWeights[o:o+blockSize]
			ls := float32(tables.KTScaleValues[sh[ib]&0xf])
			dl := float32(d * ls)
			if !cb.findBestMatch(dl, xb, weight, bestIdx[:ng]) {
				return errNoCodeword
			}
			prev := allIdx[o/8 : o/8+ng]
			keepPrevious(cb, dl, xb, weight, prev, bestIdx[:ng])
			for j := 0; j < ng; j++ {
				bi := uint32(bestIdx[j])
				ql[ib*ng+j] = uint8(bi)
				qh[(ib%4)*ng+j] |= uint8((bi>>8)&0xf) << (4 * (ib / 4))
				sh[ib] |= uint8((bi >> 12) << (4 + j))
				sumqx, sumq2 = accumulateFit(cb, bestIdx[j], ls, xb[8*j:8*j+8], weight[8*j:8*j+8], sumqx, sumq2)
			}
		}
	}
	if sumq2 > 0 {
		binary.LittleEndian.PutUint32(dst, math.Float32bits(float32(sumqx/sumq2)*1.07))
	}
	return nil
}
