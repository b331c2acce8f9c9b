package trellis

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// iq4_kt has two codebooks of 32768 four-value codewords: one per seed
// offset; bit 0 of a block's scale word picks the second.
var (
	iq4ktBook    = sync.OnceValue(func() *codebook { return newCodebook(4, 15, false, formats.KTOffset, 625, 6) })
	iq4ktBookAlt = sync.OnceValue(func() *codebook { return newCodebook(4, 15, false, formats.KTOffsetIQ4Alt, 625, 6) })
)

// quantizeRowIQ4KT: float32 row scale, then per super-block eight 32-bit
// words (codebook bit, 7-bit signed block scale, 3 high index bits per
// group), 64 low index bytes and 32 bytes of index bits 8..11.
//
// Each block tries five scales of each sign with the first codebook, then
// the best scale and the same ten trials with the second; the row scale is
// the largest block scale over -64, the block scales are rounded to it, and
// a last search with the rounded scales fixes the indices before the row
// scale is refitted.
func quantizeRowIQ4KT(dst []byte, x, imatrix []float32, sc *rowScratch) error {
	cb1, cb2 := iq4ktBook(), iq4ktBookAlt()
	const ng = blockSize / 4
	const ntry = 2
	nblock := len(x) / superBlock
	y := dst[4:]
	allScales, allWeights := sc.scales, sc.weights
	setWeights(sigma2Scale, x, imatrix, allWeights, true)
	amaxRow := rowAbsMax(x)
	if amaxRow == 0 {
		clear(dst)
		return nil
	}

	var bestIdx [ng]int32
	var amaxScale, maxScale float32
	for ibl := 0; ibl < nblock; ibl++ {
		blk := y[128*ibl : 128*ibl+128]
		clear(blk)
		for ib := 0; ib < 8; ib++ {
			o := ibl*superBlock + ib*blockSize
			xb, weight := x[o:o+blockSize], allWeights[o:o+blockSize]
			scale := &allScales[ibl*8+ib]
			amax := rowAbsMax(xb)
			if amax < 1e-16 {
				*scale = 0
				continue
			}
			var best float32
			scale0 := maxF(90, float32(124*amax)/amaxRow)
			for itry := -ntry; itry <= ntry; itry++ {
				den := kernel.FMA32(8, float32(itry), scale0)
				dp, s, ok := cb1.matchAndScale(amax/den, xb, weight, bestIdx[:])
				if !ok {
					return errNoCodeword
				}
				if s > best {
					best, *scale = s, dp
				}
				dm, s, ok := cb1.matchAndScale(-amax/den, xb, weight, bestIdx[:])
				if !ok {
					return errNoCodeword
				}
				if s > best {
					best, *scale = s, dm
				}
			}
			d, s, ok := cb2.matchAndScale(*scale, xb, weight, bestIdx[:])
			if !ok {
				return errNoCodeword
			}
			if s > best {
				*scale = d
				blk[4*ib] = 1
			}
			withOffset := false
			for itry := -ntry; itry <= ntry; itry++ {
				den := kernel.FMA32(8, float32(itry), scale0)
				dp, s, ok := cb2.matchAndScale(amax/den, xb, weight, bestIdx[:])
				if !ok {
					return errNoCodeword
				}
				if s > best {
					best, *scale, withOffset = s, dp, true
				}
				dm, s, ok := cb2.matchAndScale(-amax/den, xb, weight, bestIdx[:])
				if !ok {
					return errNoCodeword
				}
				if s > best {
					best, *scale, withOffset = s, dm, true
				}
			}
			if withOffset {
				blk[4*ib] = 1
			}
			if a := abs32(*scale); a > amaxScale {
				amaxScale, maxScale = a, *scale
			}
		}
	}

	d := -maxScale / 64
	binary.LittleEndian.PutUint32(dst, math.Float32bits(d))
	if d == 0 {
		return nil
	}
	id := 1 / d
	var sumqx, sumq2 float32
	for ibl := 0; ibl < nblock; ibl++ {
		blk := y[128*ibl : 128*ibl+128]
		ql, qh := blk[32:96], blk[96:128]
		clear(qh)
		for ib := 0; ib < 8; ib++ {
			o := ibl*superBlock + ib*blockSize
			xb, weight := x[o:o+blockSize], allWeights[o:o+blockSize]
			shb := binary.LittleEndian.Uint32(blk[4*ib:])
			cb := cb1
			if shb&1 != 0 {
				cb = cb2
			}
			// nearest_int(id*scales[ib]): GCC fuses the product into the
			// addition of 1.5*2^23 (quantize_row_iq4_kt_impl), so the exact
			// product is rounded, not its float32 rounding.
			ls := min(kernel.NearestIntMul(id, allScales[ibl*8+ib]), 63)
			shb = shb&^0xff | uint32(uint8((ls+64)<<1)|uint8(shb&1))
			dl := float32(d * float32(ls))
			if !cb.findBestMatch(dl, xb, weight, bestIdx[:]) {
				return errNoCodeword
			}
			for j := 0; j < ng; j++ {
				bi := uint32(bestIdx[j])
				shb |= (bi >> 12) << (8 + 3*j)
				ql[ng*ib+j] = uint8(bi)
				qh[(ng*ib+j)%32] |= uint8((bi>>8)&0xf) << (4 * ((ng*ib + j) / 32))
				sumqx, sumq2 = accumulateFit(cb, bestIdx[j], float32(ls), xb[4*j:4*j+4], weight[4*j:4*j+4], sumqx, sumq2)
			}
			binary.LittleEndian.PutUint32(blk[4*ib:], shb)
		}
	}
	if sumq2 > 0 {
		binary.LittleEndian.PutUint32(dst, math.Float32bits(sumqx/sumq2))
	}
	return nil
}
