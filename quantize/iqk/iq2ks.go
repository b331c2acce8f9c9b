package iqk

import "github.com/gquant/gquant/formats"

// SlowIQ2KS selects the reference's original exhaustive iq2_ks block search
// (llama-quantize --slow-iq2ks). The default, false, is what llama-quantize
// runs without the flag: the AVX2 fast search.
var SlowIQ2KS = false

// quantizeIQ2KS quantizes one iq2_ks row: an fp16 row scale, then per 256
// weights 16 bits of extra (shifted-grid bits, fifth scale bits), 4-bit
// scale nibbles of the 32-weight blocks and 2-bit indices.
func quantizeIQ2KS(y []byte, x, qwRow []float32) {
	if SlowIQ2KS {
		quantizeIQ2KSSlow(y, x, qwRow)
		return
	}
	quantizeIQ2KSFast(y, x, qwRow)
}

func quantizeIQ2KSSlow(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes = 32, 256, 70
	const maxI1, minI3 = 3 * bs / 4, bs / 4
	values := formats.IQ2NLValues[:4]
	shiftedValues := formats.IQ2NLValues[4:]
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	sw := make([]float32, nblock*sbs/bs)
	Ls := make([]int8, nblock*sbs/bs)
	var weight [bs]float32
	var sumx, sumw [bs + 1]float32
	var order [bs]int
	fv := func(v []int8) (a, b, c, d float32) {
		return float32(v[0]), float32(v[1]), float32(v[2]), float32(v[3])
	}
	p0, p1, p2, p3 := fv(values)
	s0, s1, s2, s3 := fv(shiftedValues)
	put16(y, fp16(0))
	blocks := y[2:]
	clear(blocks)
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		sigma2 := 1.5 * sumSquares(xbl) / sbs
		fallback := sigmaWeight(sigma2)
		var extra uint16
		for ib := 0; ib < sbs/bs; ib++ {
			k := ibl*(sbs/bs) + ib
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			sw[k] = 0
			for j := range weight {
				sw[k] += weight[j]
			}
			if amax, _ := absMax(xb); amax < 1e-16 {
				scales[k] = 0
				continue
			}
			sortedOrder(order[:], xb)
			prefixSums(sumw[:], sumx[:], order[:], xb, weight[:])
			var best, d float32
			isShifted := false
			try := func(a0, a1, a2, a3, b0, b1, b2, b3, v0, v1, v2, v3 float32, shifted bool) {
				sumqx := sum4(a0, a1, a2, a3, v0, v1, v2, v3)
				sumq2 := sum4sq(b0, b1, b2, b3, v0, v1, v2, v3)
				if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
					d = sumqx / sumq2
					best = d * sumqx
					isShifted = shifted
				}
			}
			for i1 := 0; i1 < maxI1; i1++ {
				for i2 := i1; i2 < bs; i2++ {
					for i3 := max(i2, minI3); i3 < bs; i3++ {
						a0, a1, a2, a3 := sumx[i1]-sumx[0], sumx[i2]-sumx[i1], sumx[i3]-sumx[i2], sumx[bs]-sumx[i3]
						b0, b1, b2, b3 := sumw[i1]-sumw[0], sumw[i2]-sumw[i1], sumw[i3]-sumw[i2], sumw[bs]-sumw[i3]
						try(a0, a1, a2, a3, b0, b1, b2, b3, p0, p1, p2, p3, false)
						try(a0, a1, a2, a3, b0, b1, b2, b3, s0, s1, s2, s3, true)
						try(a0, a1, a2, a3, b0, b1, b2, b3, p3, p2, p1, p0, false)
						try(a0, a1, a2, a3, b0, b1, b2, b3, s3, s2, s1, s0, true)
					}
				}
			}
			scales[k] = d
			if isShifted {
				extra |= 1 << ib
			}
		}
		put16(blocks[ibl*blockBytes:], extra)
	}
	iq2ksFinish(y, x, qwRow, scales, sw, Ls)
}

// iq2ksFinish quantizes the block scales of a row (one 5-bit scale per 32
// weights, shared fp16 row scale) and then the weights, as both iq2_ks
// searches do once they have their block scales and shifted bits.
func iq2ksFinish(y []byte, x, qwRow, scales, sw []float32, Ls []int8) {
	const bs, sbs, blockBytes = 32, 256, 70
	values := formats.IQ2NLValues[:4]
	shiftedValues := formats.IQ2NLValues[4:]
	d := makeQxQuants(16, scales, Ls, sw)
	if d == 0 {
		return
	}
	var weight [bs]float32
	var sumqx, sumq2 float32
	blocks := y[2:]
	for ibl := 0; ibl < len(x)/sbs; ibl++ {
		blk := blocks[ibl*blockBytes : (ibl+1)*blockBytes]
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		sigma2 := 1.5 * sumSquares(xbl) / sbs
		fallback := sigmaWeight(sigma2)
		extra := iqkLE16(blk)
		for ib := 0; ib < sbs/bs; ib++ {
			ls := int(Ls[ibl*(sbs/bs)+ib])
			blk[2+ib/2] |= byte((ls & 0xf) << (4 * (ib % 2)))
			extra |= uint16(ls>>4) << (8 + ib)
			ls -= 16
			dl := d * float32(ls)
			if dl == 0 {
				continue
			}
			bv := values
			if extra&(1<<ib) != 0 {
				bv = shiftedValues
			}
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			idl := 1 / dl
			qs := blk[6+32*(ib/4):]
			for j := 0; j < 32; j++ {
				ibest := bestIndexIQ2(bv, idl*xb[j])
				qs[j] |= byte(ibest << (2 * (ib % 4)))
				q := float32(int(bv[ibest]) * ls)
				wq := weight[j] * q
				sumqx = fma(wq, xb[j], sumqx)
				sumq2 = fma(wq, q, sumq2)
			}
		}
		put16(blk, extra)
	}
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	put16(y, fp16(1.030*d))
}

func iqkLE16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

// hsum8 adds 8 lanes the way the reference's hsum_float_8 does:
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
func hsum8(v *[8]float32) float32 {
	s0, s1, s2, s3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (s0 + s2) + (s1 + s3)
}

// nearest4 returns, for each of the 32 weights, the index j (0..3) that
// minimises (x - sign*d*values[j])^2, first one on ties, as the reference's
// AVX2 compare-and-select loop does.
func nearest4(idx *[32]uint8, xb []float32, d float32, values []int8, sign float32) {
	var best [32]float32
	for j := 0; j < 4; j++ {
		val := d * float32(values[j])
		for i, x := range xb {
			var diff float32
			if sign > 0 {
				diff = x - val
			} else {
				diff = x + val
			}
			diff = diff * diff
			if j == 0 || diff < best[i] {
				best[i], idx[i] = diff, uint8(j)
			}
		}
	}
}

// iq2ksBlockFit is compute_1block_iq2ks: the best indices for scale d and
// for -d, the least-squares scale of each, and the better of the two.
func iq2ksBlockFit(d float32, xb, w []float32, values []int8) (ok bool, bestD, score float32) {
	var idxP, idxM [32]uint8
	nearest4(&idxP, xb, d, values, 1)
	nearest4(&idxM, xb, d, values, -1)
	var sqx1, sq21, sqx2, sq22 [8]float32
	for k := 0; k < 4; k++ {
		for l := 0; l < 8; l++ {
			i := 8*k + l
			q1 := float32(values[idxP[i]])
			q2 := float32(values[idxM[i]])
			wq1, wq2 := w[i]*q1, w[i]*q2
			sqx1[l] = fma(wq1, xb[i], sqx1[l])
			sq21[l] = fma(wq1, q1, sq21[l])
			sqx2[l] = fma(wq2, xb[i], sqx2[l])
			sq22[l] = fma(wq2, q2, sq22[l])
		}
	}
	sumqx1, sumq21, sumqx2, sumq22 := hsum8(&sqx1), hsum8(&sq21), hsum8(&sqx2), hsum8(&sq22)
	if sumq21 > 0 {
		bestD = sumqx1 / sumq21
		score = sumqx1 * bestD
		ok = true
	}
	if sumq22 > 0 && (!ok || sumqx2*sumqx2 > score*sumq22) {
		bestD = sumqx2 / sumq22
		score = sumqx2 * bestD
		ok = true
	}
	return
}

// iq2ksBlockError is compute_1block_iq2ks_rmse: nearest indices for scale d
// and their weighted squared error.
func iq2ksBlockError(d float32, xb, w []float32, values []int8, idx *[32]uint8) float32 {
	nearest4(idx, xb, d, values, 1)
	var acc [8]float32
	for k := 0; k < 4; k++ {
		for l := 0; l < 8; l++ {
			i := 8*k + l
			diff := fma(-d, float32(values[idx[i]]), xb[i])
			acc[l] = fma(w[i]*diff, diff, acc[l])
		}
	}
	return hsum8(&acc)
}

// quantizeIQ2KSFast is the reference's AVX2 iq2_ks search (the default of
// llama-quantize): 55 candidate scales per block evaluated with a
// nearest-point assignment instead of the exhaustive split search, 8-lane
// sums reduced like the reference's intrinsics, and a final +-1 adjustment
// of each block scale.
func quantizeIQ2KSFast(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes = 32, 256, 70
	values := formats.IQ2NLValues[:4]
	shiftedValues := formats.IQ2NLValues[4:]
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	sw := make([]float32, nblock*sbs/bs)
	Ls := make([]int8, nblock*sbs/bs)
	var weight [bs]float32
	put16(y, fp16(0))
	blocks := y[2:]
	clear(blocks)
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		sigma2 := 1.5 * sumSquares(xbl) / sbs
		fallback := sigmaWeight(sigma2)
		var extra uint16
		for ib := 0; ib < sbs/bs; ib++ {
			k := ibl*(sbs/bs) + ib
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			amax, maxv := absMax(xb)
			var sumw float32
			for _, w := range weight {
				sumw += w
			}
			sw[k] = sumw
			if amax < 1e-14 {
				scales[k] = 0
				continue
			}
			d := maxv / float32(formats.IQ2NLValues[7])
			var best float32
			if ok, td, ts := iq2ksBlockFit(d, xb, weight[:], values); ok {
				best, d = ts, td
			}
			for itry := -13; itry <= 13; itry++ {
				if ok, td, ts := iq2ksBlockFit(maxv/fma(0.5, float32(itry), float32(values[0])), xb, weight[:], values); ok && ts > best {
					best, d = ts, td
				}
			}
			shifted := false
			for itry := -13; itry <= 13; itry++ {
				if ok, td, ts := iq2ksBlockFit(maxv/fma(0.5, float32(itry), float32(shiftedValues[0])), xb, weight[:], shiftedValues); ok && ts > best {
					best, d, shifted = ts, td, true
				}
			}
			scales[k] = d
			if shifted {
				extra |= 1 << ib
			}
		}
		put16(blocks[ibl*blockBytes:], extra)
	}
	d := makeQxQuants(16, scales, Ls, sw)
	if d == 0 {
		return
	}
	var accQX, accQ2 [8]float32
	var idx1, idx2 [32]uint8
	for ibl := 0; ibl < nblock; ibl++ {
		blk := blocks[ibl*blockBytes : (ibl+1)*blockBytes]
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		sigma2 := 1.5 * sumSquares(xbl) / sbs
		fallback := sigmaWeight(sigma2)
		extra := iqkLE16(blk)
		for ib := 0; ib < sbs/bs; ib++ {
			k := ibl*(sbs/bs) + ib
			bv := values
			if extra&(1<<ib) != 0 {
				bv = shiftedValues
			}
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			dl := d * float32(int(Ls[k])-16)
			rmse1 := iq2ksBlockError(dl, xb, weight[:], bv, &idx1)
			if Ls[k] > 0 && dl > scales[k] {
				if iq2ksBlockError(d*float32(int(Ls[k])-17), xb, weight[:], bv, &idx2) < rmse1 {
					Ls[k]--
					idx1 = idx2
				}
			} else if Ls[k] < 15 && dl < scales[k] {
				if iq2ksBlockError(d*float32(int(Ls[k])-15), xb, weight[:], bv, &idx2) < rmse1 {
					Ls[k]++
					idx1 = idx2
				}
			}
			vd := float32(int(Ls[k]) - 16)
			for kk := 0; kk < 4; kk++ {
				for l := 0; l < 8; l++ {
					i := 8*kk + l
					q := vd * float32(bv[idx1[i]])
					wq := weight[i] * q
					accQX[l] = fma(wq, xb[i], accQX[l])
					accQ2[l] = fma(wq, q, accQ2[l])
				}
			}
			ls := int(Ls[k])
			blk[2+ib/2] |= byte((ls & 0xf) << (4 * (ib % 2)))
			extra |= uint16(ls>>4) << (8 + ib)
			qs := blk[6+32*(ib/4):]
			for j := 0; j < 32; j++ {
				qs[j] |= idx1[j] << (2 * (ib % 4))
			}
		}
		put16(blk, extra)
	}
	sumqx, sumq2 := hsum8(&accQX), hsum8(&accQ2)
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	put16(y, fp16(d))
}
