package iqk

import (
	"math"
	"math/bits"

	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// iq4_kss stores 4 weights (4 bits each) in 15 bits plus one bit of the block
// scale: the quantizer only emits 16-bit groups of even parity, so the top
// bit is implied, and the group is stored scrambled (see scrambleIQ4KSS).

// scrambleIQ4KSS returns the 15-bit j with j ^ (j<<1) == v for an even-parity
// 16-bit group v (the reference's scramble table, indexed by v&0x7fff): j's
// bit k is the XOR of v's bits 0..k.
func scrambleIQ4KSS(v uint16) uint16 {
	j := v & 0x7fff
	j ^= j << 1
	j ^= j << 2
	j ^= j << 4
	j ^= j << 8
	return j & 0x7fff
}

// iq4kssPrune makes groups of four 4-bit indices even in parity for one
// trial scale dl and grid half: it holds dl times each grid point (exact in
// float64), so that each candidate costs one rounding instead of a product.
type iq4kssPrune struct {
	pv     [16]float64 // dl * values[i]
	plain  [16]float64 // dl * plain grid[i] (the reference's current error)
	approx bool        // float64 scores may decide (no float32 overflow)
}

// newIQ4KSSPrune prepares p for scale dl on values; blockOK says the block's
// values and weights are small enough for float64 scoring (see iq4kssBlockOK).
func newIQ4KSSPrune(p *iq4kssPrune, values []int8, dl float32, blockOK bool) {
	for i := range p.pv {
		p.pv[i] = float64(dl) * float64(values[i])
		p.plain[i] = float64(dl) * float64(tables.IQ4KValues[i])
	}
	p.approx = blockOK && abs32(dl) <= 1e7
}

// iq4kssBlockOK reports whether a block is far enough from float32 overflow
// for prune's float64 scores: |x| <= 1e9 and weights <= 1e15 (with |dl| <=
// 1e7, every float32 score stays below 1e34).
func iq4kssBlockOK(xb, weight []float32) bool {
	for j, x := range xb {
		if !(abs32(x) <= 1e9 && weight[j] <= 1e15) {
			return false
		}
	}
	return true
}

// iq4kssNeighbours lists, for each index q, the indices within 2 of q whose
// bit count has the other parity, ascending (-1 ends a list).
var iq4kssNeighbours = func() (n [16][4]int8) {
	for q := range n {
		k := 0
		for iq := max(q-2, 0); iq <= min(q+2, 15); iq++ {
			if iq != q && (bits.OnesCount8(uint8(iq))-bits.OnesCount8(uint8(q)))%2 != 0 {
				n[q][k] = int8(iq)
				k++
			}
		}
		for ; k < 4; k++ {
			n[q][k] = -1
		}
	}
	return
}()

// prune is the reference's prune_iq4ks: a group v (one nibble per weight, in
// the order of xv) of odd parity gets the one index moved, by at most 2
// steps, whose move costs the least weighted squared error, first on ties.
// The reference measures the current error on the plain grid even when the
// group is on the shifted one; that is kept.
func (p *iq4kssPrune) prune(v uint16, xv, wv *[4]float32) uint16 {
	if bits.OnesCount16(v)%2 == 0 {
		return v
	}
	// The moves in the reference's order, scored in float64 with a bound on
	// how far the reference's float32 scores can be from these. When the
	// least one is clear of all others by more than both bounds, it is the
	// reference's choice; otherwise the scores are recomputed as the
	// reference rounds them.
	var score, slack [16]float64
	var move [16]uint16 // the group after the move
	n := 0
	for j := 0; j < 4; j++ {
		shift := 4 * uint(j)
		q := int(v>>shift) & 0xf
		x, w := -float64(xv[j]), float64(wv[j])
		d0 := p.plain[q] + x
		d0sq := d0 * d0
		for _, iq := range &iq4kssNeighbours[q] {
			if iq < 0 {
				break
			}
			d1 := p.pv[iq] + x
			score[n&15] = w * (d1*d1 - d0sq)
			// The float32 scores are within 6u*w*(d1^2+d0^2), plus a few
			// subnormal roundings (2^-149 each) where they underflow.
			slack[n&15] = 1e-5*w*(d1*d1+d0sq) + (w+1)*1e-44
			move[n&15] = v&^(0xf<<shift) | uint16(iq)<<shift
			n++
		}
	}
	best := 0
	for i := 1; i < n; i++ {
		if score[i&15] < score[best&15] {
			best = i
		}
	}
	clear := true
	top := score[best&15] + slack[best&15]
	for i := 0; i < n; i++ {
		if i != best && score[i&15]-slack[i&15] <= top {
			clear = false
		}
	}
	if clear && p.approx {
		return move[best&15]
	}
	return p.pruneExact(v, xv, wv)
}

// pruneExact is prune with the reference's float32 scores.
func (p *iq4kssPrune) pruneExact(v uint16, xv, wv *[4]float32) uint16 {
	var score [16]float32
	var move [16]uint16
	n := 0
	for j := 0; j < 4; j++ {
		shift := 4 * uint(j)
		q := int(v>>shift) & 0xf
		x := -float64(xv[j])
		diff0 := sum32(p.plain[q], x)
		d0sq := -float64(mul(diff0, diff0))
		for _, iq := range &iq4kssNeighbours[q] {
			if iq < 0 {
				break
			}
			diff1 := float64(sum32(p.pv[iq], x))
			score[n&15] = wv[j] * sum32(diff1*diff1, d0sq)
			move[n&15] = v&^(0xf<<shift) | uint16(iq)<<shift
			n++
		}
	}
	// The reference starts from best_score = FLT_MAX and takes a move only
	// when its score is below: NaN scores (0*inf, inf-inf, from values so
	// large that the squares overflow) and infinite ones are never taken.
	// Where no score is below, it stops on an assertion; we keep the first
	// move.
	best, bestScore := 0, float32(math.MaxFloat32)
	for i := 0; i < n; i++ {
		if score[i&15] < bestScore {
			best, bestScore = i, score[i&15]
		}
	}
	return move[best&15]
}

// iq4kssGather picks the four weights of group k of a 32-weight block the
// way the format interleaves them: 2k, 2k+16, 2k+1, 2k+17.
func iq4kssGather(xv, wv *[4]float32, xb, weight []float32, k int) {
	xv[0], xv[1], xv[2], xv[3] = xb[2*k], xb[2*k+16], xb[2*k+1], xb[2*k+17]
	wv[0], wv[1], wv[2], wv[3] = weight[2*k], weight[2*k+16], weight[2*k+1], weight[2*k+17]
}

// iq4kssGatherBlock gathers all eight groups of a block (iq4kssGather).
func iq4kssGatherBlock(gx, gw *[32]float32, xb, weight []float32) {
	for k := 0; k < 8; k++ {
		iq4kssGather((*[4]float32)(gx[4*k:]), (*[4]float32)(gw[4*k:]), xb, weight, k)
	}
}

// iq4kssTrial evaluates inverse scale id on grid values: both orientations
// (id and -id) of the pruned nearest-point assignment of the block; gx and
// gw hold the block gathered by iq4kssGatherBlock.
func iq4kssTrial(xb, weight []float32, gx, gw *[32]float32, values []int8, id float32, blockOK bool) (sqxP, sq2P, sqxM, sq2M float32) {
	thisD := 1 / id
	shifted := values[0] != tables.IQ4KValues[0]
	if useIQ4KSSTrialFMA {
		if sqxP, sq2P, sqxM, sq2M, ok := iq4kssTrialAsm(gx, gw, shifted, id, thisD); ok {
			return sqxP, sq2P, sqxM, sq2M
		}
	}
	return iq4kssTrialGo(xb, weight, values, id, blockOK)
}

// iq4kssTrialGo is the portable iq4kssTrial, the reference for the
// assembly one.
func iq4kssTrialGo(xb, weight []float32, values []int8, id float32, blockOK bool) (sqxP, sq2P, sqxM, sq2M float32) {
	thisD := 1 / id
	t := grid4.half(values[0] != tables.IQ4KValues[0])
	var pr iq4kssPrune
	newIQ4KSSPrune(&pr, values, thisD, blockOK)
	var xv, wv [4]float32
	for k := 0; k < 8; k++ {
		iq4kssGather(&xv, &wv, xb, weight, k)
		var vp, vm uint16
		for j := 0; j < 4; j++ {
			al := id * xv[j]
			vp |= uint16(t.best(al)) << (4 * j)
			vm |= uint16(t.best(-al)) << (4 * j)
		}
		vp = pr.prune(vp, &xv, &wv)
		vm = pr.prune(vm, &xv, &wv)
		for j := 0; j < 4; j++ {
			w := wv[j]
			q := float32(values[(vp>>(4*j))&0xf])
			sqxP = kernel.FMA32(w*q, xv[j], sqxP)
			sq2P = kernel.FMA32(w*q, q, sq2P)
			q = float32(values[(vm>>(4*j))&0xf])
			sqxM = kernel.FMA32(w*q, xv[j], sqxM)
			sq2M = kernel.FMA32(w*q, q, sq2M)
		}
	}
	return
}

// quantizeIQ4KSS quantizes one iq4_kss row: an f32 row scale, then per 256
// weights 8 groups of 32 weights, each 8 scrambled 16-bit words whose low
// bits together hold the block's 7-bit scale and shifted-grid bit.
func quantizeIQ4KSS(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes, ntry = 32, 256, 128, 7
	values := tables.IQ4KValues[:16]
	shiftedValues := tables.IQ4KValues[16:]
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	var weight [bs]float32
	putF32(y, 0)
	blocks := y[4:]
	clear(blocks)
	var amaxScale float32
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
			blockOK := iq4kssBlockOK(xb, weight[:])
			var gx, gw [bs]float32
			iq4kssGatherBlock(&gx, &gw, xb, weight[:])
			var best float32
			d := -maxv / float32(values[0])
			for itry := -ntry; itry <= ntry; itry++ {
				for _, vals := range [2][]int8{values, shiftedValues} {
					id := float32(itry+int(vals[0])) / maxv
					sqxP, sq2P, sqxM, sq2M := iq4kssTrial(xb, weight[:], &gx, &gw, vals, id, blockOK)
					if sq2P > 0 && sqxP*sqxP > best*sq2P {
						d = sqxP / sq2P
						best = d * sqxP
					}
					if sq2M > 0 && sqxM*sqxM > best*sq2M {
						d = sqxM / sq2M
						best = d * sqxM
					}
				}
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
	var vps, vms [8]uint16
	var xv, wv [4]float32
	var prP, prM iq4kssPrune
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		blk := blocks[ibl*blockBytes : (ibl+1)*blockBytes]
		sigma2 := sumSquares(xbl) * (2.0 / sbs)
		for ib := 0; ib < sbs/bs; ib++ {
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs:]
			}
			blockWeights(weight[:], xb, qw, sigma2, squareWeight)
			l := kernel.NearestIntMul(0.5, kernel.FMA32(id, scales[ibl*8+ib], 127))
			l = clamp(l, 0, 127)<<1 - 127 // odd, so never 0
			dl := d * float32(l)
			idl := 1 / dl
			var mseP, mseM float32
			blockOK := iq4kssBlockOK(xb, weight[:])
			newIQ4KSSPrune(&prP, values, dl, blockOK)
			newIQ4KSSPrune(&prM, shiftedValues, dl, blockOK)
			for k := 0; k < bs/4; k++ {
				iq4kssGather(&xv, &wv, xb, weight[:], k)
				var vp, vm uint16
				for j := 0; j < 4; j++ {
					al := idl * xv[j]
					vp |= uint16(grid4.plain.best(al)) << (4 * j)
					vm |= uint16(grid4.shifted.best(al)) << (4 * j)
				}
				vp = prP.prune(vp, &xv, &wv)
				vm = prM.prune(vm, &xv, &wv)
				for j := 0; j < 4; j++ {
					w := wv[j]
					diff := kernel.FMA32(-dl, float32(values[(vp>>(4*j))&0xf]), xv[j])
					mseP = kernel.FMA32(w*diff, diff, mseP)
					diff = kernel.FMA32(-dl, float32(shiftedValues[(vm>>(4*j))&0xf]), xv[j])
					mseM = kernel.FMA32(w*diff, diff, mseM)
				}
				vps[k], vms[k] = vp, vm
			}
			v, bv := &vps, values
			useShifted := mseM < mseP
			if useShifted {
				v, bv = &vms, shiftedValues
			}
			for k := 0; k < bs/4; k++ {
				iq4kssGather(&xv, &wv, xb, weight[:], k)
				for j := 0; j < 4; j++ {
					q := float32(int(bv[(v[k]>>(4*j))&0xf]) * l)
					sumqx = kernel.FMA32(wv[j]*q, xv[j], sumqx)
					sumq2 = kernel.FMA32(wv[j]*q, q, sumq2)
				}
			}
			l += 127
			if useShifted {
				l |= 1
			}
			q16 := blk[16*ib : 16*(ib+1)]
			for k := 0; k < bs/4; k++ {
				put16(q16[2*k:], scrambleIQ4KSS(v[k])<<1|uint16((l>>k)&1))
			}
		}
	}
	if sumq2 > 0 {
		putF32(y, sumqx/sumq2*1.01)
	}
}
