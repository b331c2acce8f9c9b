package iqk

import (
	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// iq6nlIndex is the nearest-point table of the iq6_k grid (as nlGrid, with
// 64 points and the lookup at int(x - values[0])).
var iq6nlIndex = [249]uint8{
	0, 0, 0, 64, 1, 1, 1, 1, 1, 65, 2, 2, 2, 2, 2, 66, 3, 3, 3, 3, 67, 67, 4, 4, 4, 4, 68, 5, 5, 5, 5, 69,
	69, 6, 6, 6, 70, 70, 7, 7, 7, 71, 8, 8, 8, 72, 72, 9, 9, 9, 73, 73, 10, 10, 10, 74, 11, 11, 11, 75, 12, 12, 12, 76,
	13, 13, 13, 77, 14, 14, 14, 78, 15, 15, 79, 79, 16, 16, 80, 17, 17, 81, 81, 18, 18, 82, 19, 19, 83, 83, 20, 84, 84, 21, 85, 85,
	22, 86, 86, 23, 87, 87, 24, 88, 88, 25, 89, 89, 26, 90, 90, 27, 91, 91, 28, 92, 29, 93, 93, 30, 94, 94, 31, 95, 95, 32, 96, 33,
	97, 97, 34, 98, 98, 35, 99, 99, 36, 100, 100, 37, 101, 38, 102, 102, 39, 103, 103, 40, 104, 104, 41, 41, 105, 42, 42, 106, 106, 43, 107, 107,
	44, 108, 108, 45, 45, 109, 46, 46, 46, 110, 47, 47, 111, 111, 48, 48, 112, 49, 49, 49, 113, 50, 50, 50, 114, 51, 51, 51, 115, 52, 52, 52,
	116, 116, 53, 53, 53, 117, 54, 54, 54, 118, 118, 55, 55, 55, 119, 119, 56, 56, 56, 120, 120, 57, 57, 57, 121, 121, 58, 58, 58, 58, 122, 59,
	59, 59, 59, 123, 123, 60, 60, 60, 60, 124, 61, 61, 61, 61, 61, 125, 62, 62, 62, 62, 62, 126, 63, 63, 63,
}

// iq6Values is the grid iq6_k's quantizer searches: the 64 plain points and
// the same points plus one (not the table's second half, which the
// quantizer does not use).
var iq6Values = func() (v [128]float32) {
	for i := 0; i < 64; i++ {
		v[i] = float32(tables.IQ6NLValues[i])
		v[i+64] = v[i] + 1
	}
	return
}()

// iq6Plain and iq6Shifted are the branch-free lookups of the two halves.
var (
	iq6Plain   = newNearestTable(iq6nlIndex[:], 249, 64, iq6Values[:64])
	iq6Shifted = newNearestTable(iq6nlIndex[:], 249, 64, iq6Values[64:])
)

func bestIndexIQ6(values []float32, x float32) int {
	ix := truncInt(x - values[0])
	if ix < 0 {
		return 0
	}
	if ix >= 249 {
		return 63
	}
	ix = int(iq6nlIndex[ix])
	if ix < 64 {
		return ix
	}
	if x-values[ix-64] < values[ix-63]-x {
		return ix - 64
	}
	return ix - 63
}

// iq6Sums accumulates, over one block, sum w*q*x and sum w*q^2 for the
// iq6_k grid points nearest id*x and -id*x (as nearestTable.sums, with the
// iq6_k lookup).
func iq6Sums(xb, weight []float32, t *nearestTable, id float32) (sqxP, sq2P, sqxM, sq2M float32) {
	weight = weight[:len(xb)]
	if useSumsFMA && len(xb) > 0 {
		var out [4]float32
		iq6SumsFMA(t, &xb[0], &weight[0], len(xb), id, &out)
		return out[0], out[1], out[2], out[3]
	}
	return iq6SumsGo(xb, weight, t, id)
}

// iq6SumsGo is the portable iq6Sums, the reference for the assembly one.
func iq6SumsGo(xb, weight []float32, t *nearestTable, id float32) (sqxP, sq2P, sqxM, sq2M float32) {
	weight = weight[:len(xb)]
	for j, x := range xb {
		w := weight[j]
		al := id * x
		q := t.vals[t.bestIQ6(al)&63]
		wq := w * q
		sqxP = kernel.FMA32(wq, x, sqxP)
		sq2P = kernel.FMA32(wq, q, sq2P)
		q = t.vals[t.bestIQ6(-al)&63]
		wq = w * q
		sqxM = kernel.FMA32(wq, x, sqxM)
		sq2M = kernel.FMA32(wq, q, sq2M)
	}
	return
}

// quantizeIQ6K quantizes one iq6_k row: per 256 weights an fp16 scale, 16
// shifted-grid bits, int8 scales of 16-weight blocks and 6-bit indices.
func quantizeIQ6K(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes, ntry = 16, 256, 212, 5
	values, shiftedValues := iq6Values[:64], iq6Values[64:]
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
			d := -maxv / values[0]
			id := 1 / d
			sqxP, sq2P, sqxM, sq2M := iq6Sums(xb, weight[:], iq6Plain, id)
			d = sqxP / sq2P
			best := d * sqxP
			if sq2M > 0 && sqxM*sqxM > best*sq2M {
				d = sqxM / sq2M
				best = d * sqxM
			}
			shifted := false
			for itry := -ntry; itry <= ntry; itry++ {
				for s, t := range [2]*nearestTable{iq6Plain, iq6Shifted} {
					id = (float32(itry) + t.v0) / maxv
					sqxP, sq2P, sqxM, sq2M = iq6Sums(xb, weight[:], t, id)
					if sq2P > 0 && sqxP*sqxP > best*sq2P {
						d = sqxP / sq2P
						best = d * sqxP
						shifted = s == 1
					}
					if sq2M > 0 && sqxM*sqxM > best*sq2M {
						d = sqxM / sq2M
						best = d * sqxM
						shifted = s == 1
					}
				}
			}
			if d != 0 {
				bv := values
				if shifted {
					bv = shiftedValues
				}
				id = 1 / d
				var sumqx, sumq2 float32
				for j, v := range xb {
					q := bv[bestIndexIQ6(bv, id*v)]
					wq := weight[j] * q
					sumqx = kernel.FMA32(wq, v, sumqx)
					sumq2 = kernel.FMA32(wq, q, sumq2)
				}
				if sumq2 > 0 {
					d = sumqx / sumq2
				}
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
		d := -maxScale / 127
		put16(blk[0:], fp16(d))
		put16(blk[2:], extra)
		id := 1 / d
		scl, qsAll, qhAll := blk[4:20], blk[20:148], blk[148:212]
		var sumqx, sumq2 float32
		for ib := 0; ib < sbs/bs; ib++ {
			// nearest_int(id*scales[ib]) with the product fused (GCC).
			ls := clamp(kernel.NearestIntMul(id, scales[ib]), -127, 127)
			scl[ib] |= byte(int8(ls))
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
			if qwBlock != nil {
				qw = qwBlock[ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, fallback)
			idl := 1 / dl
			ib32 := ib / 2
			off := 16 * (ib % 2)
			qs := qsAll[32*(ib32/2)+off:]
			qh := qhAll[32*(ib32/4)+off:]
			for j := 0; j < 16; j++ {
				ibest := bestIndexIQ6(bv, idl*xb[j])
				qs[j] |= byte((ibest & 0xf) << (4 * (ib32 % 2)))
				qh[j] |= byte((ibest >> 4) << (2 * (ib32 % 4)))
				q := bv[ibest] * float32(ls)
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
