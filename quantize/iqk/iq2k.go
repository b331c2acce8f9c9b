package iqk

import (
	"sort"

	"github.com/gquant/gquant/formats"
)

// makeQxQuants picks a scale for the n values x (weights qw) on the integer
// grid -nmax..nmax-1, trying 19 candidate inverse scales; L receives the
// chosen levels offset by nmax. It is the reference's own (iqk) variant.
func makeQxQuants(nmax int, x []float32, L []int8, qw []float32) float32 {
	var maxv, amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, maxv = a, v
		}
	}
	if amax == 0 {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	fnmax := float32(nmax)
	iscale := -fnmax / maxv
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		fl := float32(l)
		sumlx = fma(qw[i]*v, fl, sumlx)
		suml2 = fma(qw[i]*fl, fl, suml2)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -fma(0.1, float32(is), fnmax) / maxv
		sumlx, suml2 = 0, 0
		for i, v := range x {
			fl := float32(clamp(nearestInt(iscale*v), -nmax, nmax-1))
			sumlx = fma(qw[i]*v, fl, sumlx)
			suml2 = fma(qw[i]*fl, fl, suml2)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i, v := range x {
				L[i] = int8(nmax + clamp(nearestInt(iscale*v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// sortedOrder fills idx with 0..len(x)-1 ordered by (x, index), the order
// std::sort gives pairs of (value, index).
func sortedOrder(idx []int, x []float32) {
	for j := range idx {
		idx[j] = j
	}
	sort.Slice(idx, func(a, b int) bool {
		xa, xb := x[idx[a]], x[idx[b]]
		return xa < xb || (xa == xb && idx[a] < idx[b])
	})
}

// prefixSums fills sumw[j+1], sumx[j+1] with the weights and weighted values
// of the first j+1 entries in sorted order.
func prefixSums(sumw, sumx []float32, order []int, xb, weight []float32) {
	sumw[0], sumx[0] = 0, 0
	for j, jj := range order {
		sumw[j+1] = sumw[j] + weight[jj]
		sumx[j+1] = fma(weight[jj], xb[jj], sumx[j])
	}
}

// sum4 is s0*v0 + s1*v1 + s2*v2 + s3*v3 contracted the way GCC does: the
// first product is fused with the second, the later ones with the sum.
func sum4(s0, s1, s2, s3, v0, v1, v2, v3 float32) float32 {
	return fma(s3, v3, fma(s2, v2, fma(s0, v0, mul(s1, v1))))
}

// sum4sq is s0*v0*v0 + ... + s3*v3*v3, contracted like sum4.
func sum4sq(s0, s1, s2, s3, v0, v1, v2, v3 float32) float32 {
	return fma(s3*v3, v3, fma(s2*v2, v2, fma(s0*v0, v0, mul(s1*v1, v1))))
}

func bestIndexIQ2(values []int8, x float32) int {
	idx := 1
	if x < float32(values[1]) {
		idx = 0
	} else if x > float32(values[2]) {
		idx = 2
	}
	if x-float32(values[idx]) < float32(values[idx+1])-x {
		return idx
	}
	return idx + 1
}

// quantizeIQ2K quantizes one iq2_k row: per 256 weights an fp16 scale, 16
// shifted-grid bits, 4-bit scales of 16-weight blocks and 2-bit indices.
func quantizeIQ2K(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes = 16, 256, 76
	values := formats.IQ2NLValues[:4]
	shiftedValues := formats.IQ2NLValues[4:]
	var weight [bs]float32
	var sumx, sumw [bs + 1]float32
	var scales, sw [sbs / bs]float32
	var Ls [sbs / bs]int8
	var order [bs]int
	fv := func(v []int8) (a, b, c, d float32) {
		return float32(v[0]), float32(v[1]), float32(v[2]), float32(v[3])
	}
	p0, p1, p2, p3 := fv(values)
	s0, s1, s2, s3 := fv(shiftedValues)
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
		quarter := 0.25 * sigma2
		fallback := func(v float32) float32 { return fma(v, v, quarter) }
		var extra uint16
		var maxAbsScale float32
		for ib := 0; ib < sbs/bs; ib++ {
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			sw[ib] = 0
			for j := range weight {
				sw[ib] += weight[j]
			}
			if amax, _ := absMax(xb); amax < 1e-16 {
				scales[ib] = 0
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
			for i1 := 0; i1 < bs; i1++ {
				for i2 := i1; i2 < bs; i2++ {
					for i3 := i2; i3 < bs; i3++ {
						a0, a1, a2, a3 := sumx[i1]-sumx[0], sumx[i2]-sumx[i1], sumx[i3]-sumx[i2], sumx[bs]-sumx[i3]
						b0, b1, b2, b3 := sumw[i1]-sumw[0], sumw[i2]-sumw[i1], sumw[i3]-sumw[i2], sumw[bs]-sumw[i3]
						try(a0, a1, a2, a3, b0, b1, b2, b3, p0, p1, p2, p3, false)
						try(a0, a1, a2, a3, b0, b1, b2, b3, s0, s1, s2, s3, true)
						try(a0, a1, a2, a3, b0, b1, b2, b3, p3, p2, p1, p0, false)
						try(a0, a1, a2, a3, b0, b1, b2, b3, s3, s2, s1, s0, true)
					}
				}
			}
			scales[ib] = d
			if isShifted {
				extra |= 1 << ib
			}
			maxAbsScale = max(maxAbsScale, abs32(d))
		}
		if maxAbsScale == 0 {
			continue
		}
		d := makeQxQuants(8, scales[:], Ls[:], sw[:])
		if d == 0 {
			continue
		}
		put16(blk[2:], extra)
		id := 1 / d
		var sumqx, sumq2 float32
		for ib := 0; ib < sbs/bs; ib++ {
			ls := clamp(nearestInt(id*scales[ib]), -8, 7)
			blk[4+ib/2] |= byte((ls + 8) << (4 * (ib % 2)))
			dl := d * float32(ls)
			if dl == 0 {
				continue
			}
			blockValues := values
			if extra&(1<<ib) != 0 {
				blockValues = shiftedValues
			}
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			idl := 1 / dl
			ib32 := ib / 2
			qs := blk[12+32*(ib32/4)+16*(ib%2):]
			for j := 0; j < 16; j++ {
				ibest := bestIndexIQ2(blockValues, idl*xb[j])
				qs[j] |= byte(ibest << (2 * (ib32 % 4)))
				q := float32(int(blockValues[ibest]) * ls)
				wq := weight[j] * q
				sumqx = fma(wq, xb[j], sumqx)
				sumq2 = fma(wq, q, sumq2)
			}
		}
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		put16(blk[0:], fp16(1.030*d))
	}
}
