package iquant

import (
	"encoding/binary"

	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

var iq4Values = &tables.KValuesIQ4NL

// iq4Level is one entry of iq4Levels: the lower candidate level for an
// integer part of x and whether the level above it is also a candidate.
type iq4Level struct {
	base     uint8
	boundary uint8
}

// iq4Levels is tables.IQ4NLIndex split into base level and boundary flag,
// and iq4ValuesF the levels as float32 padded by one so base+1 is always in
// range; both let bestIndexIQ4NL run without unpredictable branches.
var (
	iq4Levels  [len(tables.IQ4NLIndex)]iq4Level
	iq4ValuesF [17]float32
)

func init() {
	for i, l := range tables.IQ4NLIndex {
		if l < 16 {
			iq4Levels[i] = iq4Level{base: uint8(l)}
		} else {
			iq4Levels[i] = iq4Level{base: uint8(l - 16), boundary: 1}
		}
	}
	for i, v := range iq4Values {
		iq4ValuesF[i] = float32(v)
	}
	iq4ValuesF[16] = iq4ValuesF[15]
}

// bestIndexIQ4NL is best_index_iq4nl: the level of iq4Values nearest to x,
// the lower one on a tie. Out-of-table x clamps to the first or last entry,
// which are the levels 0 and 15 themselves.
func bestIndexIQ4NL(x float32) int {
	ix := min(max(int(x)-int(iq4Values[0]), 0), len(iq4Levels)-1)
	e := iq4Levels[ix]
	lo, hi := iq4ValuesF[e.base], iq4ValuesF[e.base+1]
	var up uint8
	if !(x-lo < hi-x) {
		up = 1
	}
	return int(e.base + up&e.boundary)
}

// iq4Scratch is the per-call working memory of quantizeIQ4NLImpl.
type iq4Scratch struct {
	scales [qkK / 32]float32
	weight [32]float32
	L      [qkK]uint8
}

// quantizeIQ4NLImpl is quantize_row_iq4_nl_impl with ntry = 7 for one super
// block of sbs weights in sub-blocks of 32: it writes the fp16 scale to dh,
// the packed levels to q4 and, when there are several sub-blocks, the 6-bit
// sub-block scales to scalesH/scalesL.
func quantizeIQ4NLImpl(s *iq4Scratch, sbs int, x []float32, dh, q4 []byte, scalesH *uint16, scalesL []byte, qw []float32) {
	const ntry = 7
	const bs = 32
	// GCC computes the products x*x as vectors (vmulps, rounded) and adds
	// them in index order (vaddss): the sum is not fused. With bf16 or f16
	// values x*x is exact and fused and unfused agree.
	sigma2 := sumSquaresUnfused(x[:sbs])
	sigma2 *= 2 / float32(sbs)

	clear(q4[:sbs/2])
	var maxScale, amaxScale float32
	values := iq4Values
	weight := s.weight[:]
	for ib := 0; ib < sbs/bs; ib++ {
		xb := x[ib*bs : (ib+1)*bs]
		Lb := s.L[ib*bs : (ib+1)*bs]
		if qw != nil {
			q := qw[ib*bs : (ib+1)*bs]
			for j, v := range xb {
				r, tie := fmaBits(v, v, sigma2)
				f := float32(r)
				if tie {
					f = kernel.FMA32(v, v, sigma2)
				}
				weight[j] = q[j] * sqrt(f)
			}
		} else {
			for j, v := range xb {
				weight[j] = v * v
			}
		}
		var amax, max float32
		for _, v := range xb {
			if ax := abs(v); ax > amax {
				amax, max = ax, v
			}
		}
		if amax < 1e-15 {
			s.scales[ib] = 0
			continue
		}
		d := -max / float32(values[0])
		id := 1 / d
		for j, v := range xb {
			Lb[j] = uint8(bestIndexIQ4NL(id * v))
		}
		sumqx, sumq2 := iq4Sums(weight, xb, (*[bs]uint8)(Lb))
		d = sumqx / sumq2
		best := d * sumqx
		bestSumqx, bestSumq2 := sumqx, sumq2
		if useIQ4SumsFMA {
			// All trial scales in one kernel call, then the reference's
			// scan over them in its order.
			var ids [32]float32
			var sums [64]float32
			for itry := -ntry; itry <= ntry; itry++ {
				ids[2*(itry+ntry)] = float32(itry+int(values[0])) / max
				ids[2*(itry+ntry)+1] = float32(itry+int(values[15])) / max
			}
			iq4TrialsAVX2(&xb[0], &weight[0], &ids, &iq4Tab, &sums)
			bestTrial := -1
			for i := 0; i < iq4Trials; i++ {
				sumqx, sumq2 = sums[i], sums[32+i]
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					d = sumqx / sumq2
					best = d * sumqx
					bestSumqx, bestSumq2 = sumqx, sumq2
					bestTrial = i
				}
			}
			if bestTrial >= 0 {
				id = ids[bestTrial]
				for j, v := range xb {
					Lb[j] = uint8(bestIndexIQ4NL(id * v))
				}
			}
		} else {
			// Each edge's trial scales move in small steps, so a trial
			// often gives the same levels as the previous trial of its
			// edge, and then the same sums: those are reused.
			var prevL [2][bs]uint8
			var prevSums [2][2]float32
			var cur [bs]uint8
			for itry := -ntry; itry <= ntry; itry++ {
				for e, edge := range [2]int{int(values[0]), int(values[15])} {
					id = float32(itry+edge) / max
					for j, v := range xb {
						cur[j] = uint8(bestIndexIQ4NL(id * v))
					}
					if itry > -ntry && cur == prevL[e] {
						sumqx, sumq2 = prevSums[e][0], prevSums[e][1]
					} else {
						sumqx, sumq2 = iq4Sums(weight, xb, &cur)
						prevL[e], prevSums[e] = cur, [2]float32{sumqx, sumq2}
					}
					if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
						d = sumqx / sumq2
						best = d * sumqx
						bestSumqx, bestSumq2 = sumqx, sumq2
						copy(Lb, cur[:])
					}
				}
			}
		}
		sumqx, sumq2 = bestSumqx, bestSumq2
		// Coordinate descent: move the level whose gradient step is smallest
		// while that improves the fit.
		for iter := 0; iter < 32*bs; iter++ {
			var bestJ, dir int
			if useIQ4SumsFMA {
				bestJ, dir = iq4DescentStepAVX2(&xb[0], &weight[0], &Lb[0], d, &iq4Tab)
			} else {
				bestJ, dir = iq4DescentStepGo(xb, weight, Lb, d)
			}
			if bestJ < 0 {
				break
			}
			w := weight[bestJ]
			v0, v1 := int(values[Lb[bestJ]]), int(values[int(Lb[bestJ])+dir])
			newSumqx := kernel.FMA32(w*xb[bestJ], float32(v1-v0), sumqx)
			newSumq2 := kernel.FMA32(w, float32(v1*v1-v0*v0), sumq2)
			if newSumq2 > 0 && float32(newSumqx*newSumqx) > float32(best*newSumq2) {
				sumqx, sumq2 = newSumqx, newSumq2
				d = sumqx / sumq2
				best = d * sumqx
				Lb[bestJ] = uint8(int(Lb[bestJ]) + dir)
			} else {
				break
			}
		}
		s.scales[ib] = d
		if ad := abs(d); ad > amaxScale {
			amaxScale, maxScale = ad, d
		}
	}

	if sbs/bs > 1 {
		nb := sbs / bs
		var sh uint16
		clear(scalesL[:nb/2])
		d := -maxScale / 32
		putF16(dh, d)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for ib := 0; ib < nb; ib++ {
			// GCC contracts nearest_int(id*scales[ib]) into one fused
			// multiply-add with its rounding constant: a product just off a
			// half rounds by its exact value (22.5000001 to 23).
			l := min(31, max(-32, kernel.NearestIntMul(id, s.scales[ib])))
			dl := d * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			Lb := s.L[ib*bs : (ib+1)*bs]
			for j, v := range x[ib*bs : (ib+1)*bs] {
				Lb[j] = uint8(bestIndexIQ4NL(idl * v))
			}
			l += 32
			scalesL[ib/2] |= uint8(l&0xf) << (4 * (ib % 2))
			sh |= uint16(l>>4) << (2 * ib)
		}
		*scalesH = sh
	} else {
		putF16(dh, s.scales[0])
		var id float32
		if s.scales[0] != 0 {
			id = 1 / s.scales[0]
		}
		for j, v := range x[:sbs] {
			s.L[j] = uint8(bestIndexIQ4NL(id * v))
		}
	}
	for i := 0; i < sbs/32; i++ {
		for j := 0; j < 16; j++ {
			q4[16*i+j] = s.L[32*i+j] | s.L[32*i+16+j]<<4
		}
	}
}

// iq4Sums returns sum w*x*q and sum w*q*q over a sub-block of 32 with the
// levels L, each product w*q rounded and the sums fused.
func iq4Sums(weight, xb []float32, L *[32]uint8) (sumqx, sumq2 float32) {
	weight, xb = weight[:32], xb[:32]
	if useIQ4SumsFMA {
		return iq4SumsFMA(&weight[0], &xb[0], L, &iq4ValuesF)
	}
	return iq4SumsGo(weight, xb, L)
}

// iq4SumsGo is the portable iq4Sums.
func iq4SumsGo(weight, xb []float32, L *[32]uint8) (sumqx, sumq2 float32) {
	weight, xb = weight[:32], xb[:32]
	for j, v := range xb {
		q := float32(iq4Values[L[j]&15])
		wq := weight[j] * q
		sumqx = fmaFast(wq, v, sumqx)
		sumq2 = fmaFast(wq, q, sumq2)
	}
	if sumqx == sumqx && sumq2 == sumq2 {
		return
	}
	// A float32 tie on the way (or a NaN input): redo with the exact fma.
	sumqx, sumq2 = 0, 0
	for j, v := range xb {
		q := float32(iq4Values[L[j]&15])
		wq := weight[j] * q
		sumqx = kernel.FMA32(wq, v, sumqx)
		sumq2 = kernel.FMA32(wq, q, sumq2)
	}
	return
}

func quantizeIQ4NLRow(dst []byte, x, imatrix []float32) {
	var s iq4Scratch
	for ib := 0; ib < len(x)/32; ib++ {
		var qw []float32
		if imatrix != nil {
			qw = imatrix[32*ib:]
		}
		blk := dst[18*ib : 18*ib+18]
		quantizeIQ4NLImpl(&s, 32, x[32*ib:], blk[0:2], blk[2:18], nil, nil, qw)
	}
}

func quantizeIQ4XSRow(dst []byte, x, imatrix []float32) {
	var s iq4Scratch
	for ibl := 0; ibl < len(x)/qkK; ibl++ {
		var qw []float32
		if imatrix != nil {
			qw = imatrix[qkK*ibl:]
		}
		blk := dst[136*ibl : 136*ibl+136]
		var sh uint16
		quantizeIQ4NLImpl(&s, qkK, x[qkK*ibl:], blk[0:2], blk[8:136], &sh, blk[4:8], qw)
		binary.LittleEndian.PutUint16(blk[2:4], sh)
	}
}
