package iqk

import (
	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// quantizeIQ5KS quantizes one iq5_ks row: an f32 row scale, then per 256
// weights 8 bytes of 7-bit block scales (low bit: shifted grid), 128 bytes
// of low index nibbles and 32 bytes of fifth bits.
func quantizeIQ5KS(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes, ntry = 32, 256, 168, 5
	values := tables.IQ5NLValues[:]
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	var weight [bs]float32
	blocks := y[4:]
	putF32(y, 0)
	clear(blocks)
	var amaxScale float32
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		blk := blocks[ibl*blockBytes:]
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
			d, shifted := grid5.blockScale(xb, weight[:], ntry, 1, maxv, false)
			if shifted {
				blk[ib] = 1
			}
			scales[ibl*8+ib] = d
			amaxScale = stdMax(amaxScale, abs32(d)) // std::max
		}
	}
	d := amaxScale / 127
	putF32(y, d)
	if d == 0 {
		return
	}
	id := 1 / d
	var sumqx, sumq2 float32
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		blk := blocks[ibl*blockBytes:]
		qs, qh := blk[8:136], blk[136:168]
		sigma2 := sumSquares(xbl) * (2.0 / sbs)
		for ib := 0; ib < sbs/bs; ib++ {
			bv := values[:32]
			if blk[ib]&1 != 0 {
				bv = values[32:]
			}
			l := clamp(nearestInt(0.5*kernel.FMA32(id, scales[ibl*8+ib], 127)), 0, 127) << 1
			blk[ib] |= byte(l)
			l -= 127
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
			for j := 0; j < bs; j++ {
				idx := grid5.best(bv, idl*xb[j])
				qs[bs*(ib/2)+j] |= byte((idx & 0xf) << (4 * (ib % 2)))
				qh[j] |= byte((idx >> 4) << ib)
				q := float32(int(bv[idx]) * l)
				wq := weight[j] * q
				sumqx = kernel.FMA32(wq, xb[j], sumqx)
				sumq2 = kernel.FMA32(wq, q, sumq2)
			}
		}
	}
	if sumq2 > 0 {
		putF32(y, sumqx/sumq2)
	}
}
