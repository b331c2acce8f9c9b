package trellis

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// iq3_kt quantizes magnitudes with a codebook of absolute values and stores
// each weight's sign as a bit.
var iq3ktBook = sync.OnceValue(func() *codebook {
	return newCodebook(8, 16, true, formats.KTOffset, 256, 8)
})

// quantizeRowIQ3KT: float32 row scale, then per super-block four bytes of
// linear 4-bit block scales, 32 16-bit codeword indices and 32 bytes of
// sign bits (bit ib of byte j: weight j of block ib is negative).
//
// Each block tries seven scales around its largest magnitude; the row scale
// is fitted (19 trials) to the block scales rounded to 0..15; a last search
// with the rounded scales picks the indices and the row scale is refitted.
func quantizeRowIQ3KT(dst []byte, x, imatrix []float32, sc *rowScratch) error {
	cb := iq3ktBook()
	const ng = blockSize / 8
	const step = 8
	nblock := len(x) / superBlock
	y := dst[4:]
	amaxRow := rowAbsMax(x)
	if amaxRow == 0 {
		clear(dst)
		return nil
	}
	allScales, allWeights, qtmp := sc.scales, sc.weights, sc.qtmp
	setWeights(sigma2Scale, x, imatrix, allWeights, false)

	var bestIdx [2 * ng]int32
	var xaux [blockSize]float32
	var amaxScale, maxScale float32
	for ibl := 0; ibl < nblock; ibl++ {
		clear(y[100*ibl : 100*ibl+100])
		for ib := 0; ib < 8; ib++ {
			o := ibl*superBlock + ib*blockSize
			xb, weight := x[o:o+blockSize], allWeights[o:o+blockSize]
			var amax float32
			for j, v := range xb {
				xaux[j] = abs32(v)
				amax = max(amax, xaux[j])
			}
			scale := &allScales[ibl*8+ib]
			if amax < 1e-16 {
				*scale = 0
				continue
			}
			scale0 := maxF(84, float32(123*amax)/amaxRow)
			var best float32
			found := false
			for itry := -3; itry <= 3; itry++ {
				d, s, ok := cb.matchAndScale(amax/kernel.FMA32(step, float32(itry), scale0), xaux[:], weight, bestIdx[:ng])
				if !ok {
					return errNoCodeword
				}
				if s > best {
					best, found, *scale = s, true, d
					copy(bestIdx[ng:], bestIdx[:ng])
				}
			}
			if !found {
				return errIQ3KTNoSolution
			}
			for ig := 0; ig < ng; ig++ {
				copy(qtmp[o+8*ig:o+8*ig+8], cb.values[8*int(bestIdx[ng+ig]):])
			}
			if a := abs32(*scale); a > amaxScale {
				amaxScale, maxScale = a, *scale
			}
		}
	}

	d := maxScale / 15
	var best float32
	var lanes *[2 * fitLanes]float32
	if useAVX2 {
		// All 19 trials at once, one per vector lane.
		for i, v := range x {
			sc.wx[i] = float32(allWeights[i] * abs32(v))
		}
		dls := sc.dls[:len(allScales)*fitLanes]
		for ib, s := range allScales {
			for t := 0; t < 19; t++ {
				dls[ib*fitLanes+t] = float32(blockScaleIQ3(kernel.FMA32(float32(t-9), 0.2, 15)/maxScale, s))
			}
		}
		lanes = new([2 * fitLanes]float32)
		fitTrials(sc.wx, allWeights, qtmp, dls, false, lanes)
	}
	for itry := -9; itry <= 9; itry++ {
		var sumqx, sumq2 float32
		if lanes != nil {
			sumqx, sumq2 = lanes[itry+9], lanes[fitLanes+itry+9]
		} else {
			sumqx, sumq2 = fitSumsIQ3(x, allWeights, allScales, qtmp, kernel.FMA32(float32(itry), 0.2, 15)/maxScale)
		}
		if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
			d = sumqx / sumq2
			best = float32(d * sumqx)
		}
	}

	id := float32(0)
	if d != 0 {
		id = 1 / d
	}
	for ibl := 0; ibl < nblock; ibl++ {
		for ib := 0; ib < 4; ib++ {
			ls1 := blockScaleIQ3(id, allScales[ibl*8+ib])
			ls2 := blockScaleIQ3(id, allScales[ibl*8+ib+4])
			y[100*ibl+ib] = uint8(ls1 | ls2<<4)
		}
	}
	binary.LittleEndian.PutUint32(dst, math.Float32bits(d))

	var sumqx, sumq2 float32
	for ibl := 0; ibl < nblock; ibl++ {
		blk := y[100*ibl : 100*ibl+100]
		ql, qh := blk[4:68], blk[68:100]
		clear(qh)
		for ib := 0; ib < 8; ib++ {
			o := ibl*superBlock + ib*blockSize
			xb, weight := x[o:o+blockSize], allWeights[o:o+blockSize]
			for j, v := range xb {
				xaux[j] = abs32(v)
				if v < 0 {
					qh[j] |= 1 << ib
				}
			}
			ls := float32(blk[ib%4] >> (4 * (ib / 4)) & 0xf)
			dl := float32(d * ls)
			if !cb.findBestMatch(dl, xaux[:], weight, bestIdx[:ng]) {
				return errNoCodeword
			}
			for j := 0; j < ng; j++ {
				binary.LittleEndian.PutUint16(ql[2*(ib*ng+j):], uint16(bestIdx[j]))
				sumqx, sumq2 = accumulateFit(cb, bestIdx[j], ls, xaux[8*j:8*j+8], weight[8*j:8*j+8], sumqx, sumq2)
			}
		}
	}
	if sumq2 > 0 {
		binary.LittleEndian.PutUint32(dst, math.Float32bits(sumqx/sumq2))
	}
	return nil
}

// blockScaleIQ3 is a block's 4-bit scale for the inverse row scale id:
// nearest_int(id*s) clamped to 0..15. GCC fuses the product into
// nearest_int's addition of 1.5*2^23 (quantize_row_iq3_kt_impl, in the
// row-scale trials and when it stores the scales), so the exact product is
// rounded, not its float32 rounding: they differ when id*s is within half
// an ulp of a half-integer.
func blockScaleIQ3(id, s float32) int {
	return min(max(kernel.NearestIntMul(id, s), 0), 15)
}

// fitSumsIQ3 adds up w*|x|*q and w*q*q over the row for one trial inverse
// row scale id (block scales rounded to 0..15, codeword values qtmp), in the
// reference's order. The reference (quantize_row_iq3_kt_impl's 19 trials)
// does not fuse these: GCC vectorises the products of each block (16 lanes)
// and adds them one by one, in order, so each product is rounded to float32
// before it is added. Where a block dominates the row (one huge outlier),
// the trials' ratios sumqx²/sumq2 are equal but for that rounding, and the
// fused sums picked another row scale than the reference.
func fitSumsIQ3(x, w, scales, qtmp []float32, id float32) (sumqx, sumq2 float32) {
	for ib, s := range scales {
		dl := float32(blockScaleIQ3(id, s))
		o := ib * blockSize
		xb, wb, qb := x[o:o+blockSize], w[o:o+blockSize], qtmp[o:o+blockSize]
		for j, v := range qb {
			q := float32(dl * v)
			sumqx += float32(float32(wb[j]*abs32(xb[j])) * q)
			sumq2 += float32(float32(wb[j]*q) * q)
		}
	}
	return sumqx, sumq2
}
