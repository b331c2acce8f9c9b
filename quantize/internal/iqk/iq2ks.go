package iqk

import (
	"github.com/gquant/gquant/quantize/internal/kernel"
	"math"

	"github.com/gquant/gquant/internal/tables"
)

// quantizeIQ2KS quantizes one iq2_ks row: an fp16 row scale, then per 256
// weights 16 bits of extra (shifted-grid bits, fifth scale bits), 4-bit
// scale nibbles of the 32-weight blocks and 2-bit indices. It is what
// llama-quantize runs by default, the AVX2 fast search; with --slow-iq2ks
// (kernel.Options.SlowIQ2KS) the kernel is quantizeIQ2KSSlow, the
// reference's original exhaustive block search.
func quantizeIQ2KS(y []byte, x, qwRow []float32) {
	quantizeIQ2KSFast(y, x, qwRow)
}

func quantizeIQ2KSSlow(y []byte, x, qwRow []float32) {
	const bs, sbs, blockBytes = 32, 256, 70
	const maxI1, minI3 = 3 * bs / 4, bs / 4
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	sw := make([]float32, nblock*sbs/bs)
	Ls := make([]int8, nblock*sbs/bs)
	var weight [bs]float32
	var sumx, sumw [bs + 1]float32
	var order [bs]int
	var xs [bs]float32
	put16(y, fp16(0))
	blocks := y[2:]
	clear(blocks)
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		sigma2 := 1.5 * sumSquares(xbl) / sbs
		var extra uint16
		for ib := 0; ib < sbs/bs; ib++ {
			k := ibl*(sbs/bs) + ib
			xb := xbl[ib*bs : (ib+1)*bs]
			var qw []float32
			if qwRow != nil {
				qw = qwRow[ibl*sbs+ib*bs : ibl*sbs+(ib+1)*bs]
			}
			iq2ksWeights(weight[:], xb, qw, sigma2)
			sw[k] = 0
			for j := range weight {
				sw[k] += weight[j]
			}
			if amax, _ := absMax(xb); amax < 1e-16 {
				scales[k] = 0
				continue
			}
			sortedOrder(order[:], xb)
			absSum := prefixSums(xs[:], sumw[:], sumx[:], order[:], xb, weight[:], false)
			d, isShifted := splitSearch(xs[:], sumx[:], sumw[:], absSum, maxI1, minI3)
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
	values := tables.IQ2NLValues[:4]
	shiftedValues := tables.IQ2NLValues[4:]
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
				qw = qwRow[ibl*sbs+ib*bs : ibl*sbs+(ib+1)*bs]
			}
			iq2ksWeights(weight[:], xb, qw, sigma2)
			idl := 1 / dl
			qs := blk[6+32*(ib/4):]
			for j := 0; j < 32; j++ {
				ibest := bestIndexIQ2(bv, idl*xb[j])
				qs[j] |= byte(ibest << (2 * (ib % 4)))
				q := float32(int(bv[ibest]) * ls)
				wq := weight[j] * q
				sumqx = kernel.FMA32(wq, xb[j], sumqx)
				sumq2 = kernel.FMA32(wq, q, sumq2)
			}
		}
		put16(blk, extra)
	}
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	put16(y, fp16(1.030*d))
}

// iq2ksWeights fills weight for the values xb (a block or more): with
// importance data qw, qw·sqrt(sigma2 + x^2); otherwise sigma2/4 + x^2, the
// product and sum fused as the reference's compiler contracts them here
// (iq2_k, iq3_k, iq5_k and iq6_k round the square: sigmaWeightUnfused).
func iq2ksWeights(weight, xb, qw []float32, sigma2 float32) {
	if qw != nil {
		kernel.ImatrixWeights(weight, xb, qw, sigma2, useWeightsAVX2)
		return
	}
	kernel.SigmaWeights(weight, xb, 0.25*sigma2, useWeightsAVX2)
}

// sumSquares4 is sumSquares of each 256 values of x into sums, four at a
// time (each sum in sumSquares' order).
func sumSquares4(sums, x []float32) {
	const sbs = 256
	n := len(x) / sbs
	i := 0
	for ; i+4 <= n; i += 4 {
		a := (*[sbs]float32)(x[i*sbs:])
		b := (*[sbs]float32)(x[(i+1)*sbs:])
		c := (*[sbs]float32)(x[(i+2)*sbs:])
		d := (*[sbs]float32)(x[(i+3)*sbs:])
		var sa, sb, sc, sd float32
		for j := range sbs {
			sa += mul(a[j], a[j])
			sb += mul(b[j], b[j])
			sc += mul(c[j], c[j])
			sd += mul(d[j], d[j])
		}
		sums[i], sums[i+1], sums[i+2], sums[i+3] = sa, sb, sc, sd
	}
	for ; i < n; i++ {
		sums[i] = sumSquares(x[i*sbs : (i+1)*sbs])
	}
}

// blockSums8 sums each 32 weights of w in order, the eight sums at once.
func blockSums8(sums *[8]float32, w *[256]float32) {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for j := range 32 {
		s0 += w[j]
		s1 += w[32+j]
		s2 += w[64+j]
		s3 += w[96+j]
		s4 += w[128+j]
		s5 += w[160+j]
		s6 += w[192+j]
		s7 += w[224+j]
	}
	*sums = [8]float32{s0, s1, s2, s3, s4, s5, s6, s7}
}

// absMax32 is absMax of 32 values without branches: |x| compared as bits
// (which order non-negative floats), a NaN's bits taken as those of 0 (as
// absMax never picks one).
func absMax32(x *[32]float32) (amax, maxv float32) {
	var best, bestv uint32
	for _, v := range x {
		u := math.Float32bits(v)
		a := u &^ (1 << 31)
		if a > 0x7f800000 {
			a = 0
		}
		if a > best {
			best, bestv = a, u
		}
	}
	return math.Float32frombits(best), math.Float32frombits(bestv)
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
// AVX2 compare-and-select loop does (amax is the largest |x|).
//
// The squared distances e_j are computed as the reference does, but the
// selection counts steps instead of scanning: x - d*values[j] is monotone in
// j (rounding is monotone), so e_j falls, then rises, and the first minimum
// is the number of strict falls between neighbours, provided no two e_j on
// the falling side round to equal values. The grid points are at least 12|d|
// apart, so that needs |x| beyond 10^7 |d|, or values near underflow or
// overflow: those blocks take the scan.
func nearest4(idx *[32]uint8, xb []float32, d float32, values []int8, sign float32, amax float32) {
	xb = xb[:32]
	v0, v1, v2, v3 := d*float32(values[0]), d*float32(values[1]), d*float32(values[2]), d*float32(values[3])
	if sign < 0 {
		v0, v1, v2, v3 = -v0, -v1, -v2, -v3
	}
	if !countingNearest(d, amax) {
		nearest4Scan(idx, xb, [4]float32{v0, v1, v2, v3})
		return
	}
	for i, x := range xb {
		e0, e1, e2, e3 := mul(x-v0, x-v0), mul(x-v1, x-v1), mul(x-v2, x-v2), mul(x-v3, x-v3)
		idx[i] = b2u(e1 < e0) + b2u(e2 < e1) + b2u(e3 < e2) // SETcc, no branches
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// countingNearest reports whether nearest4's counting selection is exact
// for scale d on a block whose largest |x| is amax.
func countingNearest(d, amax float32) bool {
	ad := abs32(d)
	return ad > 1e-18 && amax < 1e6*ad && amax < 1e17 && ad < 1e15
}

// nearest4Scan is nearest4 as the reference computes it: the distances to
// the four points val in order, keeping the first strictly smaller one.
// (x + d*v is computed as x - (-d*v), which is the same float32 operation.)
func nearest4Scan(idx *[32]uint8, xb []float32, val [4]float32) {
	for i, x := range xb {
		best := mul(x-val[0], x-val[0])
		idx[i] = 0
		for j := 1; j < 4; j++ {
			if e := mul(x-val[j], x-val[j]); e < best {
				best, idx[i] = e, uint8(j)
			}
		}
	}
}

// iq2ksFitter holds one block of the fast iq2_ks search and the float64
// products its 55 fits share.
type iq2ksFitter struct {
	xb, w []float32
	wx    [32]float64 // w*x
	w64   [32]float64
	absWX float64 // sum |w*x|
	amax  float32 // largest |x|
}

func newIQ2KSFitter(f *iq2ksFitter, xb, w []float32, amax float32) {
	f.xb, f.w, f.amax, f.absWX = xb[:32], w[:32], amax, 0
	if useIQ2KSAVX2 {
		return // the assembly fit needs none of the float64 products
	}
	for i, x := range f.xb {
		f.w64[i] = float64(f.w[i])
		f.wx[i] = f.w64[i] * float64(x)
		f.absWX += math.Abs(f.wx[i])
	}
}

// fit is compute_1block_iq2ks: the best indices for scale d and for -d, the
// least-squares scale of each, and the better of the two.
//
// Callers only use a fit whose score exceeds beat, so when float64 sums show
// that neither orientation can (with a margin far beyond the float32
// roundings), the fit reports !ok without its exact, costlier sums.
func (f *iq2ksFitter) fit(d float32, values []int8, beat float32) (ok bool, bestD, score float32) {
	if useIQ2KSAVX2 {
		return f.fitAVX2(d, values)
	}
	var idxP, idxM [32]uint8
	xb, w := f.xb, f.w
	var qv, qq [4]float64
	for j := range qv {
		qv[j] = float64(values[j])
		qq[j] = qv[j] * qv[j]
	}
	var sx1, s21, sx2, s22 float64
	v0, v1, v2, v3 := d*float32(values[0]), d*float32(values[1]), d*float32(values[2]), d*float32(values[3])
	if countingNearest(d, f.amax) {
		// nearest4 for d and -d, fused with the float64 sums.
		for i, x := range xb {
			e0, e1, e2, e3 := mul(x-v0, x-v0), mul(x-v1, x-v1), mul(x-v2, x-v2), mul(x-v3, x-v3)
			n1 := b2u(e1 < e0) + b2u(e2 < e1) + b2u(e3 < e2)
			e0, e1, e2, e3 = mul(x+v0, x+v0), mul(x+v1, x+v1), mul(x+v2, x+v2), mul(x+v3, x+v3)
			n2 := b2u(e1 < e0) + b2u(e2 < e1) + b2u(e3 < e2)
			idxP[i], idxM[i] = n1, n2
			sx1 += f.wx[i] * qv[n1&3]
			s21 += f.w64[i] * qq[n1&3]
			sx2 += f.wx[i] * qv[n2&3]
			s22 += f.w64[i] * qq[n2&3]
		}
	} else {
		nearest4Scan(&idxP, xb, [4]float32{v0, v1, v2, v3})
		nearest4Scan(&idxM, xb, [4]float32{-v0, -v1, -v2, -v3})
		for i := range xb {
			sx1 += f.wx[i] * qv[idxP[i]&3]
			s21 += f.w64[i] * qq[idxP[i]&3]
			sx2 += f.wx[i] * qv[idxM[i]&3]
			s22 += f.w64[i] * qq[idxM[i]&3]
		}
	}
	if beat > 0 && !mayBeat(sx1, s21, 31*f.absWX, beat) && !mayBeat(sx2, s22, 31*f.absWX, beat) {
		return false, 0, 0
	}
	var sqx1, sq21, sqx2, sq22 [8]float32
	for k := 0; k < 4; k++ {
		for l := 0; l < 8; l++ {
			i := 8*k + l
			q1 := float32(values[idxP[i]])
			q2 := float32(values[idxM[i]])
			wq1, wq2 := w[i]*q1, w[i]*q2
			sqx1[l] = kernel.FMA32(wq1, xb[i], sqx1[l])
			sq21[l] = kernel.FMA32(wq1, q1, sq21[l])
			sqx2[l] = kernel.FMA32(wq2, xb[i], sqx2[l])
			sq22[l] = kernel.FMA32(wq2, q2, sq22[l])
		}
	}
	return iq2ksPick(hsum8(&sqx1), hsum8(&sq21), hsum8(&sqx2), hsum8(&sq22))
}

// fitAVX2 is fit with the nearest-point selection and the 8-lane sums in
// assembly (the same float32 operations, lane for lane). It always computes
// the exact sums, so it needs no float64 screening.
func (f *iq2ksFitter) fitAVX2(d float32, values []int8) (ok bool, bestD, score float32) {
	var params [12]float32
	var sums [4]float32
	values = values[:4]
	for j, v := range values {
		dv := d * float32(v)
		params[j], params[4+j], params[8+j] = dv, float32(v), -dv
	}
	iq2ksFitAVX2(&f.xb[0], &f.w[0], &params, &sums)
	return iq2ksPick(sums[0], sums[1], sums[2], sums[3])
}

// iq2ksSearchAVX2 is the block scale search of quantizeIQ2KSFast with all
// 55 fits in assembly (fitAVX2 does not depend on the best score so far),
// then picked in the same order.
//
// When amax < 1e15 every scale tried passes countingNearest, so the fits
// find the nearest points by counting: the scales are d = maxv/22 and
// maxv/den with 19.5 <= |den| <= 37.5, so amax/37.5 <= |d| <= amax/19.5
// (to float32 rounding), and amax >= 1e-14 here; that gives |d| > 1e-18,
// amax < 1e6|d|, amax < 1e17 and |d| < 1e15.
func iq2ksSearchAVX2(sc *iq2ksScratch, xb, weight []float32, d, maxv, amax float32) (float32, bool) {
	const nfit = 1 + 2*27
	p := &sc.picks
	if amax < 1e15 {
		// The scales are maxv/den: d itself is maxv/values[7]. With
		// AVX-512 the fits take two scales per register, with the same sums.
		x, w := &xb[:32][0], &weight[:32][0]
		if useIQ2KS512 {
			// The first scale (den positive) counts; the 27 trial
			// scales of each grid compare with thresholds where
			// they can.
			iq2ksFitsCount512(x, w, maxv, &iq2ksTrialDen[0], 1, &iq2ksGrids[0], &sc.raw[0])
			for g := range 2 {
				if !iq2ksFitsThr512(x, w, maxv, &iq2ksThrDen[g], &iq2ksThrGrids[g], &sc.raw[1+27*g]) {
					iq2ksFitsCount512(x, w, maxv, &iq2ksTrialDen[1+27*g], 27, &iq2ksGrids[g], &sc.raw[1+27*g])
				}
			}
		} else {
			iq2ksFitsCountAVX2(x, w, maxv, &iq2ksTrialDen[0], 28, &iq2ksGrids[0], &sc.raw[0])
			iq2ksFitsCountAVX2(x, w, maxv, &iq2ksTrialDen[28], 27, &iq2ksGrids[1], &sc.raw[28])
		}
		iq2ksReducePickAVX2(&sc.raw, p)
	} else {
		var params [nfit][12]float32
		set := func(f int, d float32, values []int8) {
			for j, v := range values[:4] {
				dv := d * float32(v)
				params[f][j], params[f][4+j], params[f][8+j] = dv, float32(v), -dv
			}
		}
		values, shiftedValues := tables.IQ2NLValues[:4], tables.IQ2NLValues[4:]
		set(0, d, values)
		for itry := -13; itry <= 13; itry++ {
			set(14+itry, maxv/kernel.FMA32(0.5, float32(itry), float32(values[0])), values)
			set(41+itry, maxv/kernel.FMA32(0.5, float32(itry), float32(shiftedValues[0])), shiftedValues)
		}
		var out [nfit][4]float32
		var sums iq2ksFitSums
		iq2ksFitsAVX2(&xb[:32][0], &weight[:32][0], &params[0], nfit, &out[0])
		for f, o := range &out {
			sums.sumqx1[f], sums.sumq21[f], sums.sumqx2[f], sums.sumq22[f] = o[0], o[1], o[2], o[3]
		}
		iq2ksPickAVX2(&sums, p)
	}
	var best float32
	shifted := false
	if p.ok[0] != 0 {
		best, d = p.score[0], p.bestD[0]
	}
	for f := 1; f < nfit; f++ {
		if p.ok[f] != 0 && p.score[f] > best {
			best, d, shifted = p.score[f], p.bestD[f], f > 27
		}
	}
	return d, shifted
}

// iq2ksScratch is the working memory of iq2ksSearchAVX2, allocated once per
// row: the unreduced sums of the 55 fits (and a spare) and their picks.
type iq2ksScratch struct {
	raw   [56][4][8]float32
	picks iq2ksPicks
}

// iq2ksValueTab are the plain and the shifted grid as float32, padded to
// the 8 lanes iq2ksAccumAVX2 looks up.
var iq2ksValueTab = func() (t [2][8]float32) {
	for s := range t {
		for j := 0; j < 4; j++ {
			t[s][j] = float32(tables.IQ2NLValues[4*s+j])
		}
	}
	return
}()

// iq2ksTrialDen are the denominators of the 55 scales maxv/den of the
// fast iq2_ks search, in fit order: values[7] (the first fit's d), then
// v0 + itry/2 (itry = -13..13) of the plain grid, then of the shifted grid
// (computed as the reference does, though the values are exact).
var iq2ksTrialDen = func() (den [55]float32) {
	den[0] = float32(tables.IQ2NLValues[7])
	for itry := -13; itry <= 13; itry++ {
		den[14+itry] = kernel.FMA32(0.5, float32(itry), float32(tables.IQ2NLValues[0]))
		den[41+itry] = kernel.FMA32(0.5, float32(itry), float32(tables.IQ2NLValues[4]))
	}
	return
}()

// iq2ksPick picks the better orientation of a fit from its sums.
func iq2ksPick(sumqx1, sumq21, sumqx2, sumq22 float32) (ok bool, bestD, score float32) {
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
func iq2ksBlockError(d float32, xb, w []float32, values []int8, idx *[32]uint8, amax float32) float32 {
	if useIQ2KSAVX2 {
		var params [8]float32
		for j, v := range values[:4] {
			params[j], params[4+j] = d*float32(v), float32(v)
		}
		var idx32 [32]int32
		e := iq2ksErrorAVX2(&xb[:32][0], &w[:32][0], &params, -d, &idx32)
		for i, j := range idx32 {
			idx[i] = uint8(j)
		}
		return e
	}
	return iq2ksBlockErrorGo(d, xb, w, values, idx, amax)
}

// iq2ksBlockErrorGo is the portable iq2ksBlockError, the reference for the
// assembly one.
func iq2ksBlockErrorGo(d float32, xb, w []float32, values []int8, idx *[32]uint8, amax float32) float32 {
	nearest4(idx, xb, d, values, 1, amax)
	var acc [8]float32
	for k := 0; k < 4; k++ {
		for l := 0; l < 8; l++ {
			i := 8*k + l
			diff := kernel.FMA32(-d, float32(values[idx[i]]), xb[i])
			acc[l] = kernel.FMA32(w[i]*diff, diff, acc[l])
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
	values := tables.IQ2NLValues[:4]
	shiftedValues := tables.IQ2NLValues[4:]
	nblock := len(x) / sbs
	scales := make([]float32, nblock*sbs/bs)
	sw := make([]float32, nblock*sbs/bs)
	Ls := make([]int8, nblock*sbs/bs)
	// The second pass needs the same weights and block maxima again.
	weights := make([]float32, nblock*sbs)
	amaxs := make([]float32, nblock*sbs/bs)
	var scratch *iq2ksScratch
	if useIQ2KSAVX2 {
		scratch = new(iq2ksScratch)
	}
	// The sums of squares and of weights are each a chain of dependent
	// additions in the reference's order; taken four or eight chains at a
	// time they overlap.
	sumsq := make([]float32, nblock)
	sumSquares4(sumsq, x)
	put16(y, fp16(0))
	blocks := y[2:]
	clear(blocks)
	for ibl := 0; ibl < nblock; ibl++ {
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		sigma2 := 1.5 * sumsq[ibl] / sbs
		var qwbl []float32
		if qwRow != nil {
			qwbl = qwRow[ibl*sbs : (ibl+1)*sbs]
		}
		kbl := ibl * (sbs / bs)
		iq2ksWeights(weights[ibl*sbs:(ibl+1)*sbs], xbl, qwbl, sigma2)
		blockSums8((*[8]float32)(sw[kbl:]), (*[sbs]float32)(weights[ibl*sbs:]))
		var extra uint16
		for ib := 0; ib < sbs/bs; ib++ {
			k := kbl + ib
			xb := xbl[ib*bs : (ib+1)*bs]
			weight := weights[k*bs : (k+1)*bs]
			amax, maxv := absMax32((*[bs]float32)(xb))
			amaxs[k] = amax
			if amax < 1e-14 {
				scales[k] = 0
				continue
			}
			d := maxv / float32(tables.IQ2NLValues[7])
			if useIQ2KSAVX2 {
				var shifted bool
				scales[k], shifted = iq2ksSearchAVX2(scratch, xb, weight, d, maxv, amax)
				if shifted {
					extra |= 1 << ib
				}
				continue
			}
			var best float32
			var fitter iq2ksFitter
			newIQ2KSFitter(&fitter, xb, weight, amax)
			if ok, td, ts := fitter.fit(d, values, best); ok {
				best, d = ts, td
			}
			for itry := -13; itry <= 13; itry++ {
				if ok, td, ts := fitter.fit(maxv/kernel.FMA32(0.5, float32(itry), float32(values[0])), values, best); ok && ts > best {
					best, d = ts, td
				}
			}
			shifted := false
			for itry := -13; itry <= 13; itry++ {
				if ok, td, ts := fitter.fit(maxv/kernel.FMA32(0.5, float32(itry), float32(shiftedValues[0])), shiftedValues, best); ok && ts > best {
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
	var acc [16]float32 // 8-lane sums of (w·q)·x, then of (w·q)·q
	var idx1, idx2 [32]uint8
	for ibl := 0; ibl < nblock; ibl++ {
		blk := blocks[ibl*blockBytes : (ibl+1)*blockBytes]
		xbl := x[ibl*sbs : (ibl+1)*sbs]
		extra := iqkLE16(blk)
		for ib := 0; ib < sbs/bs; ib++ {
			k := ibl*(sbs/bs) + ib
			bv := values
			if extra&(1<<ib) != 0 {
				bv = shiftedValues
			}
			xb := xbl[ib*bs : (ib+1)*bs]
			weight := weights[k*bs : (k+1)*bs]
			dl := d * float32(int(Ls[k])-16)
			amax := amaxs[k]
			rmse1 := iq2ksBlockError(dl, xb, weight, bv, &idx1, amax)
			if Ls[k] > 0 && dl > scales[k] {
				if iq2ksBlockError(d*float32(int(Ls[k])-17), xb, weight, bv, &idx2, amax) < rmse1 {
					Ls[k]--
					idx1 = idx2
				}
			} else if Ls[k] < 15 && dl < scales[k] {
				if iq2ksBlockError(d*float32(int(Ls[k])-15), xb, weight, bv, &idx2, amax) < rmse1 {
					Ls[k]++
					idx1 = idx2
				}
			}
			vd := float32(int(Ls[k]) - 16)
			if useIQ2KSAVX2 {
				iq2ksAccumAVX2(&xb[0], &weight[0], &idx1, &iq2ksValueTab[extra>>ib&1], vd, &acc)
			} else {
				for kk := 0; kk < 4; kk++ {
					for l := 0; l < 8; l++ {
						i := 8*kk + l
						q := vd * float32(bv[idx1[i]])
						wq := weight[i] * q
						acc[l] = kernel.FMA32(wq, xb[i], acc[l])
						acc[8+l] = kernel.FMA32(wq, q, acc[8+l])
					}
				}
			}
			ls := int(Ls[k])
			blk[2+ib/2] |= byte((ls & 0xf) << (4 * (ib % 2)))
			extra |= uint16(ls>>4) << (8 + ib)
			qs := blk[6+32*(ib/4) : 6+32*(ib/4)+32]
			for j := range qs {
				qs[j] |= idx1[j] << (2 * (ib % 4))
			}
		}
		put16(blk, extra)
	}
	var accQX, accQ2 [8]float32
	copy(accQX[:], acc[:8])
	copy(accQ2[:], acc[8:])
	sumqx, sumq2 := hsum8(&accQX), hsum8(&accQ2)
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	put16(y, fp16(d))
}
