package iqk

import (
	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// quantizeIQ3K quantizes one iq3_k row: per 256 weights an fp16 scale, 16
// shifted-grid bits, 16 sign bits and 4-bit odd magnitudes of the 16-weight
// block scales, and 3-bit indices (2 low bits in qs, the high bit in qh).
func quantizeIQ3K(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes, ntry = 16, 256, 110, 3
	values := tables.IQ3NLValues[:]
	var weight [bs]float32
	var scales [sbs / bs]float32
	for ibl := 0; ibl < len(x)/sbs; ibl++ {
		blk := y[ibl*blockBytes : (ibl+1)*blockBytes]
		for i := range blk {
			blk[i] = 0
		}
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		var qwBlock []float32
		if qwRow != nil {
			qwBlock = qwRow[ibl*sbs:]
		}
		sigma2 := 1.5 * sumSquares(xbl) / sbs
		fallback := sigmaWeightUnfused(sigma2)
		var extra uint16
		var maxAbsScale float32
		for ib := 0; ib < sbs/bs; ib++ {
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			amax, maxv := absMax(xb)
			if amax < 1e-16 {
				scales[ib] = 0
				continue
			}
			d, shifted := grid3.blockScale(xb, weight[:], ntry, 2, maxv, true)
			if d == 0 {
				scales[ib] = 0
				continue
			}
			// The reference follows this with a coordinate-descent loop whose
			// result it never uses; only this re-fit matters.
			d = grid3.half(shifted).refine(xb, weight[:], d)
			scales[ib] = d
			if shifted {
				extra |= 1 << ib
			}
			maxAbsScale = macroMax(maxAbsScale, abs32(d)) // MAX
		}
		if maxAbsScale == 0 {
			continue
		}
		d := maxAbsScale / 31
		put16(blk[2:], extra)
		id := 1 / d
		var scalesH uint16
		scalesL, qsAll, qhAll := blk[6:14], blk[14:78], blk[78:110]
		var sumqx, sumq2 float32
		for ib := 0; ib < sbs/bs; ib++ {
			// GCC fuses id*|scale|-1 here (0.5*t is exact after it).
			ls := clamp(nearestInt(0.5*kernel.FMA32(id, abs32(scales[ib]), -1)), 0, 15)
			scalesL[ib/2] |= byte(ls << (4 * (ib % 2)))
			neg := scales[ib] < 0
			if neg {
				scalesH |= 1 << ib
			}
			ls = 2*ls + 1
			if neg {
				ls = -ls
			}
			dl := d * float32(ls)
			if dl == 0 {
				continue
			}
			bv := values[:8]
			if extra&(1<<ib) != 0 {
				bv = values[8:]
			}
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			idl := 1 / dl
			ib32 := ib / 2
			off := 16 * (ib % 2)
			qs := qsAll[32*(ib32/4)+off:]
			qh := qhAll[off:]
			for j := 0; j < 16; j++ {
				ibest := grid3.best(bv, idl*xb[j])
				qs[j] |= byte((ibest & 3) << (2 * (ib32 % 4)))
				qh[j] |= byte((ibest >> 2) << (ib32 % 8))
				q := float32(int(bv[ibest]) * ls)
				wq := weight[j] * q
				sumqx = kernel.FMA32(wq, xb[j], sumqx)
				sumq2 = kernel.FMA32(wq, q, sumq2)
			}
		}
		put16(blk[4:], scalesH)
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		put16(blk[0:], fp16(1.01*d))
	}
}

// quantizeIQ5K quantizes one iq5_k row: per 256 weights an fp16 scale, 16
// shifted-grid bits, 6-bit block scales and 5-bit indices (4 in qs, 1 in qh).
func quantizeIQ5K(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes, ntry = 16, 256, 176, 5
	values := tables.IQ5NLValues[:]
	var weight [bs]float32
	var scales [sbs / bs]float32
	for ibl := 0; ibl < len(x)/sbs; ibl++ {
		blk := y[ibl*blockBytes : (ibl+1)*blockBytes]
		for i := range blk {
			blk[i] = 0
		}
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		var qwBlock []float32
		if qwRow != nil {
			qwBlock = qwRow[ibl*sbs:]
		}
		sigma2 := 2 * sumSquares(xbl) / sbs
		fallback := sigmaWeightUnfused(sigma2)
		var extra uint16
		var maxScale, maxAbsScale float32
		for ib := 0; ib < sbs/bs; ib++ {
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			amax, maxv := absMax(xb)
			if amax < 1e-16 {
				scales[ib] = 0
				continue
			}
			d, shifted := grid5.blockScale(xb, weight[:], ntry, 1, maxv, false)
			if d != 0 {
				d = grid5.half(shifted).refine(xb, weight[:], d)
			}
			scales[ib] = d
			if shifted {
				extra |= 1 << ib
			}
			if a := abs32(d); a > maxAbsScale {
				maxAbsScale, maxScale = a, d
			}
		}
		if maxAbsScale == 0 {
			continue
		}
		d := -maxScale / 32
		put16(blk[0:], fp16(d))
		put16(blk[2:], extra)
		id := 1 / d
		scalesH, scalesL, qsAll, qhAll := blk[4:8], blk[8:16], blk[16:144], blk[144:176]
		var sumqx, sumq2 float32
		for ib := 0; ib < sbs/bs; ib++ {
			// nearest_int(id*scales[ib]) with the product fused (GCC).
			ls := clamp(kernel.NearestIntMul(id, scales[ib]), -32, 31)
			uls := ls + 32
			scalesL[ib/2] |= byte((uls & 0xf) << (4 * (ib % 2)))
			scalesH[ib/4] |= byte((uls >> 4) << (2 * (ib % 4)))
			dl := d * float32(ls)
			if dl == 0 {
				continue
			}
			bv := values[:32]
			if extra&(1<<ib) != 0 {
				bv = values[32:]
			}
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			idl := 1 / dl
			ib32 := ib / 2
			off := 16 * (ib % 2)
			qs := qsAll[32*(ib32/2)+off:]
			qh := qhAll[off:]
			for j := 0; j < 16; j++ {
				ibest := grid5.best(bv, idl*xb[j])
				qs[j] |= byte((ibest & 0xf) << (4 * (ib32 % 2)))
				qh[j] |= byte((ibest >> 4) << (ib32 % 8))
				q := float32(int(bv[ibest]) * ls)
				wq := weight[j] * q
				sumqx = kernel.FMA32(wq, xb[j], sumqx)
				sumq2 = kernel.FMA32(wq, q, sumq2)
			}
		}
		if sumq2 > 0 {
			put16(blk[0:], fp16(sumqx/sumq2))
		}
	}
}
