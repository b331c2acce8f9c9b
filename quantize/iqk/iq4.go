package iqk

import "github.com/gquant/gquant/formats"

// iq4nlIndex maps int(x)-values[0] (0..240) to the grid index nearest x, or
// to 16+i when x lies between values[i] and values[i+1] closely enough that
// the caller must compare distances.
var iq4nlIndex = [241]int8{
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 17, 17, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 18, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 19, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 20, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
	5, 5, 21, 21, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 22, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 23, 23, 8, 8, 8, 8,
	8, 8, 8, 8, 8, 8, 24, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 25, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 26, 26,
	11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 27, 27, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 28, 13, 13, 13,
	13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 29, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14,
	14, 14, 14, 14, 30, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
}

// nlGrid finds nearest grid points with the reference's lookup tables:
// index[int(x)-values[0]] is the nearest point i, or n+i when x lies between
// points i and i+1 and the distances must be compared.
type nlGrid struct {
	n     int    // points per grid half
	limit int    // table entries the lookup may use
	index []int8 // the table
}

var (
	grid3 = nlGrid{n: 8, limit: 111, index: iq3nlIndex[:]}
	grid4 = nlGrid{n: 16, limit: 241, index: iq4nlIndex[:]}
	grid5 = nlGrid{n: 32, limit: 247, index: iq5nlIndex[:]}
)

// best returns the index into values (n points) nearest x.
func (g *nlGrid) best(values []int8, x float32) int {
	ix := truncInt(x) - int(values[0])
	if ix < 0 {
		return 0
	}
	if ix >= g.limit {
		return g.n - 1
	}
	ix = int(g.index[ix])
	if ix < g.n {
		return ix
	}
	if x-float32(values[ix-g.n]) < float32(values[ix-g.n+1])-x {
		return ix - g.n
	}
	return ix - g.n + 1
}

func bestIndexIQ4(values []int8, x float32) int { return grid4.best(values, x) }

// truncInt converts like C's (int)x on x86 (cvttss2si): out-of-range values
// give INT_MIN.
func truncInt(x float32) int {
	if !(x > -2147483648 && x < 2147483648) {
		return -2147483648
	}
	return int(int32(x))
}

// nlSums accumulates, over one block, sum w*q*x and sum w*q^2 for the grid
// points nearest id*x and -id*x (the "plus" and "minus" orientations).
func (g *nlGrid) sums(xb, weight []float32, values []int8, id float32) (sqxP, sq2P, sqxM, sq2M float32) {
	for j, x := range xb {
		w := weight[j]
		al := id * x
		q := float32(values[g.best(values, al)])
		wq := w * q
		sqxP = fma(wq, x, sqxP)
		sq2P = fma(wq, q, sq2P)
		q = float32(values[g.best(values, -al)])
		wq = w * q
		sqxM = fma(wq, x, sqxM)
		sq2M = fma(wq, q, sq2M)
	}
	return
}

// blockScale searches the scale of one block over the grid (values holds
// the plain half then the shifted half), trying inverse scales
// (step*itry + values[0])/max for itry in -ntry..ntry on both halves.
// guardFirst: the first estimate is only taken when its sum of q^2 is
// positive (iq3 variants); otherwise it is taken as is.
func (g *nlGrid) blockScale(xb, weight []float32, values []int8, ntry, step int, maxv float32, guardFirst bool) (d float32, shifted bool) {
	shiftedValues := values[g.n:]
	if ntry > 0 {
		d = -maxv / float32(values[0])
	} else {
		d = maxv / float32(values[0])
	}
	id := 1 / d
	sqxP, sq2P, sqxM, sq2M := g.sums(xb, weight, values, id)
	var best float32
	if !guardFirst || sq2P > 0 {
		d = sqxP / sq2P
		best = d * sqxP
	}
	if sq2M > 0 && sqxM*sqxM > best*sq2M {
		d = sqxM / sq2M
		best = d * sqxM
	}
	for itry := -ntry; itry <= ntry; itry++ {
		for s, vals := range [2][]int8{values, shiftedValues} {
			id = float32(step*itry+int(vals[0])) / maxv
			sqxP, sq2P, sqxM, sq2M = g.sums(xb, weight, vals, id)
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
	return d, shifted
}

// refine re-fits d for a block on its chosen grid half: the weighted least
// squares scale of the points nearest x/d (d unchanged if the fit is empty).
func (g *nlGrid) refine(xb, weight []float32, values []int8, d float32) float32 {
	id := 1 / d
	var sumqx, sumq2 float32
	for j, x := range xb {
		q := float32(values[g.best(values, id*x)])
		wq := weight[j] * q
		sumqx = fma(wq, x, sumqx)
		sumq2 = fma(wq, q, sumq2)
	}
	if sumq2 > 0 {
		return sumqx / sumq2
	}
	return d
}

func squareWeight(x float32) float32 { return x * x }

// quantizeIQ4KS quantizes one iq4_ks row: an f32 row scale, then per 256
// weights 8 bytes of 7-bit block scales (low bit: shifted grid) and 128
// bytes of 4-bit indices.
func quantizeIQ4KS(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes = 32, 256, 136
	values := formats.IQ4KValues[:]
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
			d, shifted := grid4.blockScale(xb, weight[:], values, 7, 1, maxv, false)
			if shifted {
				blk[ib] = 1
			}
			scales[ibl*8+ib] = d
			amaxScale = max(amaxScale, abs32(d))
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
			l := nearestInt(0.5 * fma(id, scales[ibl*8+ib], 127))
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
				sumqx += fma(w1*q1, xb[j], mul(w2*q2, xb[j+bs/2]))
				sumq2 += fma(w1*q1, q1, mul(w2*q2, q2))
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
	values := formats.IQ4KValues[:]
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
			d, shifted := grid4.blockScale(xb, weight[:], values, 7, 1, maxv, false)
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
			l := clamp(nearestInt(id*scales[ib]), -32, 31)
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
				sumqx = fma(wq, xb[j], sumqx)
				sumq2 = fma(wq, q, sumq2)
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
