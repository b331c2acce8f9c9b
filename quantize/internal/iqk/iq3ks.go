package iqk

import (
	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// quantizeIQ3KS quantizes one iq3_ks row: an fp16 row scale, then per 256
// weights 16 bits of "extra" (fifth scale bits, then shifted-grid bits), 4-bit
// scale nibbles and 3-bit indices (2 in qs, 1 in qh).
func quantizeIQ3KS(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes, ntry = 32, 256, 102, 5
	values := tables.IQ3NLValues[:]
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	extras := make([]uint16, nblock)
	var weight [bs]float32
	blocks := y[2:]
	clear(blocks)
	var amaxScale, maxScale float32
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		sigma2 := sumSquares(xbl) * (2.0 / sbs)
		for ib := 0; ib < sbs/bs; ib++ {
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, squareWeight)
			amax, maxv := absMax(xb)
			if amax < 1e-16 {
				scales[ibl*8+ib] = 0
				continue
			}
			d, shifted := grid3.blockScale(xb, weight[:], ntry, 1, maxv, true)
			if shifted {
				extras[ibl] |= 1 << (8 + ib)
			}
			scales[ibl*8+ib] = d
			if a := abs32(d); a > amaxScale {
				amaxScale, maxScale = a, d
			}
		}
	}
	d := -maxScale / 16
	put16(y, fp16(d))
	if d == 0 {
		for ibl := range extras {
			put16(blocks[ibl*blockBytes:], extras[ibl])
		}
		return
	}
	id := 1 / d
	var sumqx, sumq2 float32
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		blk := blocks[ibl*blockBytes:]
		scl, qsAll, qhAll := blk[2:6], blk[6:70], blk[70:102]
		sigma2 := sumSquares(xbl) * (2.0 / sbs)
		for ib := 0; ib < sbs/bs; ib++ {
			bv := values[:8]
			if (extras[ibl]>>(8+ib))&1 != 0 {
				bv = values[8:]
			}
			// nearest_int(id*scales[ib]) with the product fused (GCC).
			l := clamp(kernel.NearestIntMul(id, scales[ibl*8+ib]), -16, 15)
			ul := l + 16
			scl[ib%4] |= byte((ul & 0xf) << (4 * (ib / 4)))
			extras[ibl] |= uint16(ul>>4) << ib
			dl := d * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, squareWeight)
			qs := qsAll[(ib/4)*bs:]
			qh := qhAll[(ib/8)*bs:]
			for j := 0; j < bs; j++ {
				i := grid3.best(bv, idl*xb[j])
				qs[j] |= byte((i & 3) << (2 * (ib % 4)))
				qh[j] |= byte((i >> 2) << (ib % 8))
				q := float32(int(bv[i]) * l)
				wq := weight[j] * q
				sumqx = kernel.FMA32(wq, xb[j], sumqx)
				sumq2 = kernel.FMA32(wq, q, sumq2)
			}
		}
		put16(blk, extras[ibl])
	}
	if sumq2 > 0 {
		put16(y, fp16(sumqx/sumq2))
	}
}
