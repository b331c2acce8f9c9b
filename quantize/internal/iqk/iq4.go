package iqk

import (
	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

func squareWeight(x float32) float32 { return x * x }

// quantizeIQ4KS quantizes one iq4_ks row: an f32 row scale, then per 256
// weights 8 bytes of 7-bit block scales (low bit: shifted grid) and 128
// bytes of 4-bit indices.
func quantizeIQ4KS(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes = 32, 256, 136
	values := tables.IQ4KValues[:]
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	var weight [bs]float32
	blocks := y[4:]
	for i := range blocks {
		blocks[i] = 0
	}
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
			d, shifted := grid4.blockScale(xb, weight[:], 7, 1, maxv, false)
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
		sigma2 := sumSquares(xbl) * (2.0 / sbs)
		for ib := 0; ib < sbs/bs; ib++ {
			blockValues := values
			if blk[ib]&1 != 0 {
				blockValues = values[16:]
			}
			l := nearestInt(0.5 * kernel.FMA32(id, scales[ibl*8+ib], 127))
			l = clamp(l, 0, 127) << 1
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
			qs := blk[8+ib*bs/2:]
			for j := 0; j < bs/2; j++ {
				i1 := bestIndexIQ4(blockValues, idl*xb[j])
				i2 := bestIndexIQ4(blockValues, idl*xb[j+bs/2])
				qs[j] = byte(i1 | i2<<4)
				w1, w2 := weight[j], weight[j+bs/2]
				q1 := float32(int(blockValues[i1]) * l)
				q2 := float32(int(blockValues[i2]) * l)
				sumqx += kernel.FMA32(w1*q1, xb[j], mul(w2*q2, xb[j+bs/2]))
				sumq2 += kernel.FMA32(w1*q1, q1, mul(w2*q2, q2))
			}
		}
	}
	if sumq2 > 0 {
		putF32(y, sumqx/sumq2)
	}
}

// quantizeIQ4K quantizes one iq4_k row: per 256 weights an fp16 scale, 16
// shifted-grid bits, 6-bit scales of 16-weight blocks and 4-bit indices.
func quantizeIQ4K(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes = 16, 256, 144
	values := tables.IQ4KValues[:]
	var weight [bs]float32
	var scales [sbs / bs]float32
	var L [sbs]uint8
	for ibl := 0; ibl < len(x)/sbs; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		blk := y[ibl*blockBytes : (ibl+1)*blockBytes]
		for i := range blk {
			blk[i] = 0
		}
		var qwBlock []float32
		if qwRow != nil {
			qwBlock = qwRow[ibl*sbs:]
		}
		sigma2 := sumSquares(xbl) * (2.0 / sbs)
		var maxScale, amaxScale float32
		var extra uint16
		for ib := 0; ib < sbs/bs; ib++ {
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, squareWeight)
			amax, maxv := absMax(xb)
			if amax < 1e-16 {
				scales[ib] = 0
				continue
			}
			d, shifted := grid4.blockScale(xb, weight[:], 7, 1, maxv, false)
			if shifted {
				extra |= 1 << ib
			}
			scales[ib] = d
			if a := abs32(d); a > amaxScale {
				amaxScale, maxScale = a, d
			}
		}
		d := -maxScale / 32
		put16(blk[0:], fp16(d))
		put16(blk[2:], extra)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		var scalesH uint32
		scalesL := blk[8:16]
		var sumqx, sumq2 float32
		for ib := 0; ib < sbs/bs; ib++ {
			blockValues := values
			if extra&(1<<ib) != 0 {
				blockValues = values[16:]
			}
			// nearest_int(id*scales[ib]) with the product fused (GCC).
			l := clamp(kernel.NearestIntMul(id, scales[ib]), -32, 31)
			dl := d * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, squareWeight)
			for j := 0; j < bs; j++ {
				li := bestIndexIQ4(blockValues, idl*xb[j])
				L[ib*bs+j] = uint8(li)
				w := weight[j]
				q := float32(int(blockValues[li]) * l)
				wq := w * q
				sumqx = kernel.FMA32(wq, xb[j], sumqx)
				sumq2 = kernel.FMA32(wq, q, sumq2)
			}
			l += 32
			if ib%2 == 0 {
				scalesL[ib/2] = byte(l & 0xf)
			} else {
				scalesL[ib/2] |= byte(l&0xf) << 4
			}
			scalesH |= uint32(l>>4) << (2 * ib)
		}
		// scales_h is two little-endian uint16 words: 2 bits per block.
		blk[4], blk[5], blk[6], blk[7] = byte(scalesH), byte(scalesH>>8), byte(scalesH>>16), byte(scalesH>>24)
		if sumq2 > 0 {
			put16(blk[0:], fp16(sumqx/sumq2))
		}
		qs := blk[16:]
		for i := 0; i < sbs/32; i++ {
			for j := 0; j < 16; j++ {
				qs[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
			}
		}
	}
}
