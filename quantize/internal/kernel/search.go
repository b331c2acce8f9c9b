package kernel

import (
	"bytes"
	"math"
	"math/bits"
)

// The searches below are ports of the shared scale searches of the reference
// (ik_llama.cpp ggml/src/ggml-quants.c, plus the shorter make_qx_quants of
// ggml/src/iqk/iqk_quantize.cpp). They decide bit-exactness for most types, so
// the arithmetic follows what GCC emits for the reference build:
//
//   - a product whose only use is an addition or subtraction is fused
//     (FMA32 for float32, math.FMA for float64);
//   - a product used more than once (w*l in make_qkx2_quants feeds three
//     sums) is rounded once and added unfused wherever it is used;
//   - in a*b ± c*d one product is fused and the other rounded on its own;
//     usually the first in source order, but GCC's statement order decides
//     (the numerator of this_scale in make_qkx2/3_quants fuses the second),
//     so each such expression was checked against the golden data;
//   - every other product is rounded to float32 explicitly (float32(a*b)) so
//     that the Go compiler cannot fuse it either;
//   - reductions are sequential in source order;
//   - nearest_int(a*b) is inlined, so the product is fused into the add of
//     the rounding constant: NearestIntMul rounds the exact product;
//   - loops that GCC vectorizes for the reference's AVX-512 target turn their
//     float sums into in-order ("fold-left") reductions of rounded vector
//     products: nothing is fused there. Those loops are marked "vectorized"
//     below (found with -fopt-info-vec on GCC 12, -march=skylake-avx512);
//   - where the same search is compiled differently at different call sites
//     (after inlining), a Products argument says which form the caller gets.
//
// The golden kernel input is too small to tell some of these apart; the
// whole-file runs of quantize/kquant_e2e_test.go decided the rest (sum_l and
// sum_x of make_qkx2_quants, the first loop of make_qx_quants).
//
// For speed the trial loops quantize all values first (quantizeUpTo,
// quantizeOffset: the same rounding as roundProd) and skip the sums of a
// trial whose quants repeat the previous trial's, which cannot change the
// outcome; every sum that is computed is computed in the reference's order.
//
// With AVX2 and FMA (search_amd64.s) the trials of make_qx_quants,
// make_qkx2_quants and make_qkx3_quants run in SIMD lanes, one trial per lane, so that every
// lane's sums are still sequential in index order; the portable loops stay
// the reference, and search_simd_test.go checks the two agree bit for bit.

// GroupMaxEps is the reference's GROUP_MAX_EPS: groups whose largest magnitude
// is below it are treated as all zero.
const GroupMaxEps = float32(1e-15)

// Abs32 is fabsf.
func Abs32(v float32) float32 {
	return math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
}

// Sqrt32 is sqrtf (the float64 square root of a float32, rounded to float32,
// is correctly rounded).
func Sqrt32(v float32) float32 {
	return float32(math.Sqrt(float64(v)))
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// qxWeight is the weight make_qx_quants gives x[i] without an importance
// vector, by rmse type.
func qxWeight(x float32, rmseType int) float32 {
	switch rmseType {
	case 1:
		return float32(x * x)
	case 2:
		return 1
	case 3:
		return Abs32(x)
	default:
		return Sqrt32(Abs32(x))
	}
}

// MakeQxQuants is the reference's make_qx_quants from ggml-quants.c: a
// symmetric search for the scale d so that x ≈ d*(L-nmax), L in [0, 2*nmax),
// over 19 trial scales followed by a greedy one-step refinement. qw is the
// weight of each value or nil (then rmseType picks x², 1, |x| or sqrt|x|).
// rmseType 0 returns the plain max-based scale; a negative rmseType returns
// early after the first least-squares fit. L receives len(x) values.
//
// The reference uses it for q3_K with an imatrix (per 16 values with nmax 4,
// and over the 16 sub-block scales with nmax 32), q6_K (nmax 32, with and
// without imatrix), q4_0/q5_0/q6_0 with an imatrix (nmax 8/16/32). GCC
// compiles it once, out of line, for all of them: its first loop is scalar
// (fused), the 38 trial loops are vectorized, the refinement is scalar.
func (s Search) MakeQxQuants(nmax int, x []float32, L []int8, rmseType int, qw []float32) float32 {
	n := len(x)
	L = L[:n]
	if s.asm() && rmseType > 0 && n <= 64 {
		return makeQxQuantsSIMD(nmax, x, L, rmseType, qw)
	}
	var max, amax float32
	for _, v := range x {
		if ax := Abs32(v); ax > amax {
			amax, max = ax, v
		}
	}
	if amax < GroupMaxEps {
		clear(L)
		return 0
	}
	iscale := float32(-nmax) / max
	if rmseType == 0 {
		for i, v := range x {
			l := roundProd(iscale, v)
			L[i] = int8(nmax + clampInt(l, -nmax, nmax-1))
		}
		return 1 / iscale
	}
	returnEarly := false
	if rmseType < 0 {
		rmseType = -rmseType
		returnEarly = true
	}
	// w holds the weights, wx the rounded products w*x that every trial
	// multiplies by l.
	var wbuf, wxbuf [64]float32
	w, wx := wbuf[:], wxbuf[:]
	if n > len(wbuf) {
		w, wx = make([]float32, n), make([]float32, n)
	}
	w, wx = w[:n], wx[:n]
	if qw != nil {
		copy(w, qw[:n])
	} else {
		for i, v := range x {
			w[i] = qxWeight(v, rmseType)
		}
	}
	for i, v := range x {
		wx[i] = float32(w[i] * v)
	}
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(roundProd(iscale, v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		fl := float32(l)
		// not vectorized: fused
		sumlx = FMA32(wx[i], fl, sumlx)
		suml2 = FMA32(float32(w[i]*fl), fl, suml2)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	return qxFinish(s.asm(), nmax, x, L, w, wx, max, iscale, scale, sumlx, suml2, returnEarly)
}

// qxFirst is what qxFirstAVX2 returns: the value of largest magnitude, that
// magnitude, iscale = -nmax/max and the sums of the first quantization.
type qxFirst struct {
	max, amax, iscale, sumlx, suml2 float32
}

// makeQxQuantsSIMD is MakeQxQuants with rmseType > 0 and n <= 64: the first
// passes in assembly (qxFirstAVX2), then qxFinish.
func makeQxQuantsSIMD(nmax int, x []float32, L []int8, rmseType int, qw []float32) float32 {
	n := len(x)
	var w, wx [64]float32
	returnEarly := rmseType < 0
	if returnEarly {
		rmseType = -rmseType
	}
	squares := qw == nil && rmseType == 1
	if qw != nil {
		copy(w[:n], qw[:n])
	} else if !squares {
		for i, v := range x {
			w[i] = qxWeight(v, rmseType)
		}
	}
	var f qxFirst
	qxFirstAVX2(&x[0], &w[0], n, float32(nmax), squares, &wx[0], &L[0], &f)
	if f.amax < GroupMaxEps {
		clear(L)
		return 0
	}
	var scale float32
	if f.suml2 != 0 {
		scale = f.sumlx / f.suml2
	}
	return qxFinish(true, nmax, x, L, w[:n], wx[:n], f.max, f.iscale, scale, f.sumlx, f.suml2, returnEarly)
}

// qxFinish is the rest of MakeQxQuants after the first quantization (L, its
// sums sumlx and suml2, scale = sumlx/suml2 or 0): the early return, the
// trials and the refinement.
func qxFinish(asm bool, nmax int, x []float32, L []int8, w, wx []float32, max, iscale, scale, sumlx, suml2 float32, returnEarly bool) float32 {
	n := len(x)
	if returnEarly {
		if suml2 > 0 {
			return 0.5 * (scale + 1/iscale)
		}
		return 1 / iscale
	}
	best := scale * sumlx
	bestSumlx, bestSuml2 := sumlx, suml2
	if asm {
		scale, best, bestSumlx, bestSuml2 = qxTrialsSIMD(nmax, x, L, w, wx, max, scale, best, bestSumlx, bestSuml2)
	} else {
		scale, best, bestSumlx, bestSuml2 = qxTrials(nmax, x, L, w, wx, max, scale, best, bestSumlx, bestSuml2)
	}

	sumlx, suml2 = bestSumlx, bestSuml2
	scanSIMD := asm && n%8 == 0
	for iter := 0; iter < n*(2*nmax-1); iter++ {
		var bestJ int
		var gmax float32
		if scanSIMD {
			bestJ, gmax = qxRefineScanSIMD(x, w, L, scale, nmax)
		} else {
			bestJ, gmax = qxRefineScan(x, w, L, scale, nmax)
		}
		if bestJ < 0 {
			break
		}
		newSumlx, newSuml2 := sumlx, suml2
		wj := w[bestJ]
		l := int(L[bestJ]) - nmax
		// Both branches of the reference add or subtract w*x[best_j]; GCC
		// hoists that product above the branch and rounds it on its own
		// (vmulss, then vaddss/vsubss), so it is not fused. w*(2*l±1)
		// differs per branch and is fused. The difference shows on blocks
		// with one non-zero value, where every step of the refinement is
		// an exact tie decided by the last bit.
		wx := float32(wj * x[bestJ])
		if gmax > 0 {
			newSumlx += wx
			newSuml2 = FMA32(wj, float32(2*l+1), newSuml2)
			l++
		} else {
			newSumlx -= wx
			newSuml2 = FMA32(-wj, float32(2*l-1), newSuml2)
			l--
		}
		if newSuml2 > 0 && float32(newSumlx*newSumlx) > float32(best*newSuml2) {
			sumlx, suml2 = newSumlx, newSuml2
			scale = sumlx / suml2
			best = scale * sumlx
			L[bestJ] = int8(l + nmax)
		} else {
			break
		}
	}
	return scale
}

// qxRefineScan finds the step of one refinement iteration of MakeQxQuants:
// the first index with the largest |g|, g = (scale·w)·fma(-scale, l, x),
// among those whose quant l can move by one in g's direction, and that g;
// bestJ is -1 when there is none.
func qxRefineScan(x []float32, w []float32, L []int8, scale float32, nmax int) (bestJ int, gmax float32) {
	w = w[:len(x)]
	L = L[:len(x)]
	var absGmax float32
	bestJ = -1
	for j, v := range x {
		l := int(L[j]) - nmax
		// fma32, written out so that the loop stays call-free
		ds := float64(-scale)*float64(l) + float64(v)
		diff := float32(ds)
		if math.Float64bits(ds)<<35 == 1<<63 {
			diff = FMA32(-scale, float32(l), v)
		}
		g := float32(scale*w[j]) * diff
		if (g > 0 && l < nmax-1) || (g < 0 && l > -nmax) {
			if ag := Abs32(g); ag > absGmax {
				absGmax, gmax, bestJ = ag, g, j
			}
		}
	}
	return bestJ, gmax
}

// qxRefineScanSIMD is qxRefineScan by qxRefineScanAVX2 (len(x) a multiple
// of 8).
func qxRefineScanSIMD(x []float32, w []float32, L []int8, scale float32, nmax int) (bestJ int, gmax float32) {
	bestJ = qxRefineScanAVX2(&x[0], &w[0], &L[0], len(x), scale, -scale, float32(nmax))
	if bestJ < 0 {
		return -1, 0
	}
	l := float32(int(L[bestJ]) - nmax)
	return bestJ, float32(scale*w[bestJ]) * FMA32(-scale, l, x[bestJ])
}

// qxTrials runs the 38 trial scales of make_qx_quants in the reference's
// order (two sequences, -(nmax + 0.1*is)/max and (nmax-1 + 0.1*is)/max,
// alternating), keeping in L the quants of the best trial. It takes and
// returns the scale, the score sumlx²/suml2 (as scale*sumlx) and the sums of
// the best trial so far.
func qxTrials(nmax int, x []float32, L []int8, w, wx []float32, max, scale, best, bestSumlx, bestSuml2 float32) (float32, float32, float32, float32) {
	n := len(x)
	// The two sequences of trial scales move in small steps, so a trial
	// often yields the same quants as the previous one of its sequence; its
	// sums are then the same too and need not be recomputed. bufs holds the
	// latest quants (offset by nmax) of each sequence and the current
	// trial's, by index.
	var bufs [3][64]uint8
	var qs [3][]uint8
	for k := range qs {
		if n <= len(bufs[k]) {
			qs[k] = bufs[k][:n]
		} else {
			qs[k] = make([]uint8, n)
		}
	}
	var xdbuf [64]float64
	xd := xdbuf[:]
	if n > len(xdbuf) {
		xd = make([]float64, n)
	}
	xd = xd[:n]
	for i, v := range x {
		xd[i] = float64(v)
	}
	var prevSums [2][2]float32 // Σw·x·l and Σw·l² of each sequence's latest trial
	prevIdx := [2]int{0, 1}
	curIdx := 2
	nums := qxTrialNumerators(nmax)
	for is := -9; is <= 9; is++ {
		for k, trial := range [2]float32{-nums[0][is+9] / max, nums[1][is+9] / max} {
			cur := qs[curIdx]
			quantizeOffset(cur, xd, trial, nmax, 2*nmax-1)
			var sumlx, suml2 float32
			if is > -9 && bytes.Equal(cur, qs[prevIdx[k]]) {
				sumlx, suml2 = prevSums[k][0], prevSums[k][1]
			} else {
				sumlx, suml2 = qxSums(cur, w, wx, nmax)
			}
			if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
				for i, q := range cur {
					L[i] = int8(q)
				}
				scale = sumlx / suml2
				best = scale * sumlx
				bestSumlx, bestSuml2 = sumlx, suml2
			}
			prevSums[k] = [2]float32{sumlx, suml2}
			prevIdx[k], curIdx = curIdx, prevIdx[k]
		}
	}

	return scale, best, bestSumlx, bestSuml2
}

// qxLanes is the number of trial lanes of qxTrialSumsAVX2: the 38 trials of
// make_qx_quants rounded up to a multiple of 16.
const qxLanes = 48

// qxTrialsSIMD is qxTrials with the sums of all 38 trials computed at once
// by qxTrialSumsAVX2 (one trial per lane, each sum in index order), then
// compared in the reference's order.
func qxTrialsSIMD(nmax int, x []float32, L []int8, w, wx []float32, max, scale, best, bestSumlx, bestSuml2 float32) (float32, float32, float32, float32) {
	n := len(x)
	var scales, sumlxs, suml2s [qxLanes]float32
	const trials = 1<<38 - 1
	// mask holds the trials that pass the test below against best0, the
	// best on entry. float32(best*suml2) does not decrease with best, so
	// the others fail it against any best >= best0 too; should a winner
	// lower best (by rounding), every later trial is looked at again.
	best0 := best
	var mask uint64
	if useAVX512 {
		mask = qxTrialSums512(qxLaneNumerators(nmax), max, &x[0], &w[0], &wx[0], n, float32(-nmax), float32(nmax-1), best, &scales, &sumlxs, &suml2s) & trials
	} else {
		mask = qxTrialSumsAVX2(qxLaneNumerators(nmax), max, &x[0], &w[0], &wx[0], n, float32(-nmax), float32(nmax-1), best, &scales, &sumlxs, &suml2s) & trials
	}
	bestTrial := -1
	for ; mask != 0; mask &= mask - 1 {
		t := bits.TrailingZeros64(mask)
		sumlx, suml2 := sumlxs[t], suml2s[t]
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			scale = sumlx / suml2
			best = scale * sumlx
			bestSumlx, bestSuml2 = sumlx, suml2
			bestTrial = t
			if best < best0 {
				mask |= trials &^ (1<<(t+1) - 1)
			}
		}
	}
	if bestTrial >= 0 {
		var qbuf [64]float64
		var lbuf [64]uint8
		xd, q := qbuf[:], lbuf[:]
		if n > len(qbuf) {
			xd, q = make([]float64, n), make([]uint8, n)
		}
		xd, q = xd[:n], q[:n]
		for i, v := range x {
			xd[i] = float64(v)
		}
		quantizeOffset(q, xd, scales[bestTrial], nmax, 2*nmax-1)
		for i, v := range q {
			L[i] = int8(v)
		}
	}
	return scale, best, bestSumlx, bestSuml2
}

// qxNumerators holds, per nmax up to 32, the numerators of make_qx_quants'
// trial scales: nmax + 0.1*is and nmax-1 + 0.1*is (fused) for is in [-9, 9].
var qxNumerators [33]*[2][19]float32

func init() {
	for nmax := 1; nmax < len(qxNumerators); nmax++ {
		qxNumerators[nmax] = computeQxNumerators(nmax)
	}
}

func computeQxNumerators(nmax int) *[2][19]float32 {
	var t [2][19]float32
	for is := -9; is <= 9; is++ {
		t[0][is+9] = FMA32(0.1, float32(is), float32(nmax))
		t[1][is+9] = FMA32(0.1, float32(is), float32(nmax-1))
	}
	return &t
}

// qxLaneNums holds, per nmax up to 32, the numerators of the 38 trial scales
// of make_qx_quants in the order qxTrialsSIMD evaluates them, signed:
// -(nmax + 0.1*is) and nmax-1 + 0.1*is alternating, padded with the last.
var qxLaneNums [33]*[qxLanes]float32

func init() {
	for nmax := 1; nmax < len(qxLaneNums); nmax++ {
		qxLaneNums[nmax] = computeQxLaneNumerators(nmax)
	}
}

func computeQxLaneNumerators(nmax int) *[qxLanes]float32 {
	var t [qxLanes]float32
	nums := qxTrialNumerators(nmax)
	for is := 0; is < 19; is++ {
		t[2*is] = -nums[0][is]
		t[2*is+1] = nums[1][is]
	}
	for k := 38; k < qxLanes; k++ {
		t[k] = t[37] // padding: finite, results unused
	}
	return &t
}

func qxLaneNumerators(nmax int) *[qxLanes]float32 {
	if nmax > 0 && nmax < len(qxLaneNums) {
		return qxLaneNums[nmax]
	}
	return computeQxLaneNumerators(nmax)
}

func qxTrialNumerators(nmax int) *[2][19]float32 {
	if nmax > 0 && nmax < len(qxNumerators) {
		return qxNumerators[nmax]
	}
	return computeQxNumerators(nmax)
}

// qxSums returns Σw·x·l and Σw·l² of one trial of make_qx_quants (q holds
// l + nmax). GCC vectorizes this loop, so each product is rounded and the sums
// are in order.
func qxSums(q []uint8, w, wx []float32, nmax int) (sumlx, suml2 float32) {
	w = w[:len(q)]
	wx = wx[:len(q)]
	for i, l := range q {
		fl := float32(int(l) - nmax)
		sumlx += float32(wx[i] * fl)
		suml2 += float32(float32(w[i]*fl) * fl)
	}
	return sumlx, suml2
}

// MakeQxQuantsIQK is the shorter make_qx_quants of iqk_quantize.cpp: the same
// symmetric search with weights qw (required), 18 trial scales and no
// refinement. The reference uses it for the block scales of the iqk types
// (iq2_k, iq3_k and relatives).
func (s Search) MakeQxQuantsIQK(nmax int, x []float32, L []int8, qw []float32) float32 {
	n := len(x)
	L = L[:n]
	qw = qw[:n]
	var max, amax float32
	for _, v := range x {
		if ax := Abs32(v); ax > amax {
			amax, max = ax, v
		}
	}
	if amax == 0 {
		clear(L)
		return 0
	}
	fnmax := float32(nmax)
	iscale := float32(-nmax) / max
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(roundProd(iscale, v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		fl := float32(l)
		sumlx = FMA32(float32(qw[i]*v), fl, sumlx)
		suml2 = FMA32(float32(qw[i]*fl), fl, suml2)
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
		iscale = -FMA32(0.1, float32(is), fnmax) / max
		sumlx, suml2 = 0, 0
		for i, v := range x {
			l := clampInt(roundProd(iscale, v), -nmax, nmax-1)
			fl := float32(l)
			sumlx = FMA32(float32(qw[i]*v), fl, sumlx)
			suml2 = FMA32(float32(qw[i]*fl), fl, suml2)
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(nmax + clampInt(roundProd(iscale, v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// MakeQ3Quants is the reference's make_q3_quants: a symmetric search with
// weights x² and up to five coordinate-descent passes (doRMSE), or the plain
// max-based scale. L receives values in [0, 2*nmax). The reference uses it for
// q3_K without an imatrix (16 values, nmax 4).
func (s Search) MakeQ3Quants(nmax int, x []float32, L []int8, doRMSE bool) float32 {
	n := len(x)
	L = L[:n]
	if s.asm() && doRMSE && n > 0 {
		scale, zero := q3QuantsAVX2(&x[0], n, nmax, GroupMaxEps, &L[0])
		if zero {
			clear(L)
			return 0
		}
		return scale
	}
	var max, amax float32
	for _, v := range x {
		if ax := Abs32(v); ax > amax {
			amax, max = ax, v
		}
	}
	if amax < GroupMaxEps {
		clear(L)
		return 0
	}
	iscale := float32(-nmax) / max
	if doRMSE {
		var sumlx, suml2 float32
		for i, v := range x {
			l := clampInt(roundProd(iscale, v), -nmax, nmax-1)
			L[i] = int8(l)
			w := float32(v * v)
			fl := float32(l)
			sumlx = FMA32(float32(w*v), fl, sumlx)
			suml2 = FMA32(float32(w*fl), fl, suml2)
		}
		for itry := 0; itry < 5; itry++ {
			changed := 0
			for i, v := range x {
				w := float32(v * v)
				li := float32(L[i])
				slx := FMA32(-float32(w*v), li, sumlx)
				if slx > 0 {
					sl2 := FMA32(-float32(w*li), li, suml2)
					newL := clampInt(NearestInt(float32(v*sl2)/slx), -nmax, nmax-1)
					if newL != int(L[i]) {
						fl := float32(newL)
						slx = FMA32(float32(w*v), fl, slx)
						sl2 = FMA32(float32(w*fl), fl, sl2)
						if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
							L[i] = int8(newL)
							sumlx, suml2 = slx, sl2
							changed++
						}
					}
				}
			}
			if changed == 0 {
				break
			}
		}
		for i := range L {
			L[i] += int8(nmax)
		}
		return sumlx / suml2
	}
	for i, v := range x {
		L[i] = int8(clampInt(roundProd(iscale, v), -nmax, nmax-1) + nmax)
	}
	return 1 / iscale
}

// Products says how GCC compiled the products of a sum loop at a call site
// of a search. The searches are static functions that GCC inlines into each
// caller and compiles anew there, so the same source loop is contracted at one
// call site and not at another (fully unrolled, partly vectorized or left as a
// loop); the golden data decides which.
type Products int

const (
	// FusedProducts: each product is fused into the running sum (FMA).
	FusedProducts Products = iota
	// RoundedProducts: each product is rounded (to float32, or float64 for
	// the float64 sums of MakeQkx3Quants), then added.
	RoundedProducts
)

// MakeQkx2Quants is the reference's make_qkx2_quants: an asymmetric search for
// scale and min so that x ≈ scale*L - min, L in [0, nmax], trying nstep+1
// scales (nmax + rmin + rdelta*is)/(max-min) and keeping the least weighted
// absolute (useMAD) or squared error. It returns scale and the min as a
// non-negative offset (the reference's *the_min). laux is scratch of len(x).
//
// The reference uses it without an imatrix: q2_K (16 values, nmax 3, MAD;
// the first loop is unrolled and Σw·x fused) and q4_K/q5_K (32 values, nmax
// 15/31; the first loop stays a loop and Σw·x adds rounded products).
// sumXProducts says which.
func (s Search) MakeQkx2Quants(nmax int, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int, useMAD bool, sumXProducts Products) (scale, theMin float32) {
	n := len(x)
	L = L[:n]
	laux = laux[:n]
	weights = weights[:n]
	if s.asm() && n <= 64 && nstep+qkx2Lanes16 <= qkx3MaxTrials {
		return makeQkx2QuantsSIMD(nmax, x, weights, L, rmin, rdelta, nstep, useMAD, sumXProducts)
	}
	min, max := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		v := x[i]
		if v < min {
			min = v
		}
		if v > max {
			max = v
		}
		w := weights[i]
		sumW += w
		if sumXProducts == FusedProducts {
			sumX = FMA32(w, v, sumX)
		} else {
			sumX += float32(w * v)
		}
	}
	if min > 0 {
		min = 0
	}
	if max-min < 1e-10 {
		clear(L)
		return 0, -min
	}
	fnmax := float32(nmax)
	iscale := fnmax / (max - min)
	scale = 1 / iscale
	var bestMAD float32
	for i, v := range x {
		l := clampInt(roundProd(iscale, v-min), 0, nmax)
		L[i] = uint8(l)
		diff := FMA32(scale, float32(l), min) - v
		if useMAD {
			diff = Abs32(diff)
		} else {
			diff = float32(diff * diff)
		}
		bestMAD = FMA32(weights[i], diff, bestMAD)
	}
	if nstep < 1 {
		return scale, -min
	}
	// Trials whose quants repeat the previous trial's are skipped, as in
	// MakeQkx3Quants.
	var prevBuf [64]uint8
	var xmBuf [64]float64
	prev, xm := prevBuf[:], xmBuf[:]
	if n > len(prevBuf) {
		prev, xm = make([]uint8, n), make([]float64, n)
	}
	prev, xm = prev[:n], xm[:n]
	setDiffs(xm, x, min)
	for is := 0; is <= nstep; is++ {
		iscale = (FMA32(rdelta, float32(is), rmin) + fnmax) / (max - min)
		quantizeUpTo(laux, xm, iscale, nmax)
		if is > 0 && bytes.Equal(laux, prev) {
			continue
		}
		copy(prev, laux)
		var sumL, sumL2, sumXL float32
		for i, l := range laux {
			w := weights[i]
			fl := float32(l)
			// w*l is shared by the three sums, so GCC rounds it once and
			// adds it to sum_l unfused.
			wl := float32(w * fl)
			sumL += wl
			sumL2 = FMA32(wl, fl, sumL2)
			sumXL = FMA32(wl, x[i], sumXL)
		}
		D := FMA32(sumW, sumL2, -float32(sumL*sumL))
		if D <= 0 {
			continue
		}
		// GCC fuses the second product here, the first one in D and thisMin.
		thisScale := FMA32(-sumX, sumL, float32(sumW*sumXL)) / D
		thisMin := FMA32(sumL2, sumX, -float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var mad float32
		for i, v := range x {
			diff := FMA32(thisScale, float32(laux[i]), thisMin) - v
			if useMAD {
				diff = Abs32(diff)
			} else {
				diff = float32(diff * diff)
			}
			mad = FMA32(weights[i], diff, mad)
		}
		if mad < bestMAD {
			copy(L, laux)
			bestMAD = mad
			scale = thisScale
			if thisMin != min {
				min = thisMin
				setDiffs(xm, x, min)
			}
		}
	}
	return scale, -min
}

// qkx2Lanes16 is the number of trials qkx2Trials16AVX2 evaluates at once.
const qkx2Lanes16 = 16

// qkx2Lanes is what qkx2Trials16AVX2 returns for each of its sixteen trials:
// the trial's iscale and, as MakeQkx2Quants computes them from the trial's
// sums, the determinant D, the least-squares scale and min (0 where the fit's
// min is positive) and the weighted error. The values are meaningless where
// D <= 0.
type qkx2Lanes struct {
	iscale, D, scale, min, mad [qkx2Lanes16]float32
}

// qkx2Sums is what qkx2SumsAVX2 returns: the smallest and largest value and
// Σw, Σw·x as MakeQkx2Quants' first loop computes them.
type qkx2Sums struct {
	min, max, sumW, sumX float32
}

// makeQkx2QuantsSIMD is MakeQkx2Quants for n <= 64 with the first pass, the
// first quantization and the trials in assembly.
func makeQkx2QuantsSIMD(nmax int, x, weights []float32, L []uint8, rmin, rdelta float32, nstep int, useMAD bool, sumXProducts Products) (scale, theMin float32) {
	n := len(x)
	var sums qkx2Sums
	qkx2SumsAVX2(&x[0], &weights[0], n, sumXProducts == FusedProducts, &sums)
	min, max := sums.min, sums.max
	if min > 0 {
		min = 0
	}
	if max-min < 1e-10 {
		clear(L)
		return 0, -min
	}
	fnmax := float32(nmax)
	iscale := fnmax / (max - min)
	scale = 1 / iscale
	// min <= every x here, so the differences need no clamp.
	bestMAD := qkx2FirstErrorAVX2(&x[0], &weights[0], n, fnmax, iscale, scale, min, useMAD, &L[0])
	if nstep >= 1 {
		scale, min = qkx2TrialsSIMD(nmax, x, weights, L, rmin, rdelta, nstep, useMAD, max, min, scale, bestMAD, sums.sumW, sums.sumX)
	}
	return scale, -min
}

// qkx2TrialsSIMD is the trial loop of MakeQkx2Quants with up to sixteen
// consecutive trials evaluated at once by qkx2Trials16AVX2 (eight by
// qkx2Trials8AVX2 when no more are left), then compared in order, as
// qkx3TrialsSIMD does: the trials use the min in effect when they start,
// and when a trial wins with a new min the trials after it are evaluated
// again from there. Trials whose quants repeat the previous trial's are not
// skipped: they cannot win. n is at most 64.
func qkx2TrialsSIMD(nmax int, x, weights []float32, L []uint8, rmin, rdelta float32, nstep int, useMAD bool, max, min, scale, bestMAD, sumW, sumX float32) (float32, float32) {
	n := len(x)
	nums := qkx3TrialNumerators(nmax, rmin, rdelta, nstep)
	// The quants of the best trial are stored in L at the end, from its
	// iscale and the min its quants were computed with.
	bestIscale, bestMin, improved := float32(0), min, false
	var lanes qkx2Lanes
	for is := 0; is <= nstep; {
		var mask uint32
		left := nstep + 1 - is
		if left <= 8 {
			mask = qkx2Trials8AVX2(&nums[is], max-min, &x[0], &weights[0], n, min, float32(nmax), sumW, sumX, useMAD, bestMAD, &lanes)
		} else {
			mask = qkx2Trials16AVX2(&nums[is], max-min, &x[0], &weights[0], n, min, float32(nmax), sumW, sumX, useMAD, bestMAD, &lanes)
		}
		// Lanes outside the mask fail the test below already against this
		// bestMAD, so they fail it against any later (smaller) one.
		if left < 32 {
			mask &= 1<<left - 1
		}
		next := is + qkx2Lanes16
		for ; mask != 0; mask &= mask - 1 {
			k := bits.TrailingZeros32(mask)
			if !(lanes.D[k] > 0) || !(lanes.mad[k] < bestMAD) {
				continue
			}
			bestIscale, bestMin, improved = lanes.iscale[k], min, true
			bestMAD = lanes.mad[k]
			scale = lanes.scale[k]
			if m := lanes.min[k]; m != min {
				min = m
				next = is + k + 1
				break
			}
		}
		is = next
	}
	if improved {
		storeTrialQuants(x, L, bestIscale, bestMin, nmax)
	}
	return scale, min
}

// qkx2PlainNumerators holds the trial numerators of the calls of q2_K, q4_K
// and q5_K without an imatrix, looked up without hashing.
var qkx2PlainNumerators = [3]struct {
	key  qkx3Key
	nums *[qkx3MaxTrials]float32
}{{key: qkx3Key{3, -0.5, 0.1, 15}}, {key: qkx3Key{15, -1, 0.1, 20}}, {key: qkx3Key{31, -0.5, 0.1, 15}}}

func init() {
	for i := range qkx2PlainNumerators {
		t := &qkx2PlainNumerators[i]
		t.nums = computeQkx3Numerators(t.key)
		qkx3Numerators[t.key] = t.nums
	}
}

// MakeQkx3Quants is ik_llama's make_qkx3_quants: like MakeQkx2Quants but with
// the sums in float64, the squared error computed from the sums, and (without
// useMAD) a greedy one-step refinement of L afterwards. weights may be nil
// (then x² is used). laux is scratch of len(x).
//
// The reference uses it with an imatrix for q2_K (16 values, nmax 3), q4_K
// (32, nmax 15) and q5_K (32, nmax 31), and for q4_1/q5_1 with an imatrix.
//
// sumX2Products says how Σw·x² is summed. The golden build (ggml-quants.c
// compiled -fPIC, as a shared library) inlines make_qkx3_quants into
// quantize_row_q2_K_impl and fuses (w*x)*x into the sum there
// (FusedProducts); q4_K, q5_K, q4_1 and q5_1 call the out-of-line constprop
// clone, where w*x is one vmulsd feeding both Σw·x and Σw·x², so (w*x)*x is
// rounded before it is added (RoundedProducts, rounded to float64 here). w*x
// itself is exact either way, and so is every product of the trials and the
// refinement for nmax <= 31, whatever GCC fuses there. Only float32 inputs
// with full mantissas can tell the two apart (bf16 ones make (w*x)*x
// exact): ../../testdata/f32rows.
func (s Search) MakeQkx3Quants(nmax int, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int, useMAD bool, sumX2Products Products) (scale, theMin float32) {
	n := len(x)
	L = L[:n]
	laux = laux[:n]
	fusedX2 := sumX2Products == FusedProducts
	if s.asm() && !useMAD && n <= 64 && nmax <= 31 && nstep >= 1 && nstep+16 <= qkx3MaxTrials {
		if scale, theMin, ok := makeQkx3QuantsSIMD(nmax, x, weights, L, rmin, rdelta, nstep, fusedX2); ok {
			return scale, theMin
		}
	}
	// wd holds the weights as float64: every use of a weight is in float64.
	var wbuf [64]float64
	wd := wbuf[:]
	if n > len(wbuf) {
		wd = make([]float64, n)
	}
	wd = wd[:n]
	if weights != nil {
		for i, w := range weights[:n] {
			wd[i] = float64(w)
		}
	} else {
		for i, v := range x {
			wd[i] = float64(float32(v * v))
		}
	}
	min, max := x[0], x[0]
	sumW := wd[0]
	sumX := sumW * float64(x[0])
	sumX2 := sumW * float64(x[0]) * float64(x[0])
	for i := 1; i < n; i++ {
		v := x[i]
		if v < min {
			min = v
		}
		if v > max {
			max = v
		}
		w := wd[i]
		sumW += w
		// w*x is exact and feeds both sums: Σw·x adds it, Σw·x² adds
		// (w*x)*x fused or rounded, as sumX2Products says (the first term,
		// sumW*x[0]*x[0] above, is rounded in both). It shows where the fit
		// is exact (blocks of two values) and the squared errors compared
		// are rounding noise.
		wx := w * float64(v)
		sumX += wx
		if fusedX2 {
			sumX2 = math.FMA(wx, float64(v), sumX2)
		} else {
			sumX2 += float64(wx * float64(v))
		}
	}
	if min > 0 {
		min = 0
	}
	if max-min < 1e-10 {
		clear(L)
		return 0, -min
	}
	fnmax := float32(nmax)
	iscale := fnmax / (max - min)
	scale = 1 / iscale
	var bestMAD float64
	for i, v := range x {
		l := clampInt(roundProd(iscale, v-min), 0, nmax)
		L[i] = uint8(l)
		diff := math.FMA(float64(scale), float64(l), float64(min)) - float64(v)
		if useMAD {
			diff = math.Abs(diff)
		} else {
			diff = diff * diff
		}
		bestMAD = math.FMA(wd[i], diff, bestMAD)
	}
	if nstep < 1 {
		return scale, -min
	}
	if s.asm() && !useMAD && n <= 64 && nmax <= 31 && nstep+8 <= qkx3MaxTrials {
		var xd [64]float64
		for i, v := range x {
			xd[i] = float64(v)
		}
		scale, min = qkx3TrialsSIMD(nmax, x, wd, &xd, L, rmin, rdelta, nstep, max, min, scale, bestMAD, sumW, sumX, sumX2)
	} else {
		// A trial whose quants equal those of the trial before has the same sums
		// and error, which cannot beat the best error (it was compared with it
		// already), so it is skipped. prev holds the previous trial's quants,
		// xm the values minus the current min, as float64.
		var prevBuf [64]uint8
		var xmBuf [64]float64
		prev, xm := prevBuf[:], xmBuf[:]
		if n > len(prevBuf) {
			prev, xm = make([]uint8, n), make([]float64, n)
		}
		prev, xm = prev[:n], xm[:n]
		setDiffs(xm, x, min)
		for is := 0; is <= nstep; is++ {
			iscale = (FMA32(rdelta, float32(is), rmin) + fnmax) / (max - min)
			quantizeUpTo(laux, xm, iscale, nmax)
			if is > 0 && bytes.Equal(laux, prev) {
				continue
			}
			copy(prev, laux)
			var sumL, sumL2, sumXL float64
			for i := 0; i < n; i++ {
				// w*l, w*l*l and w*l*x are exact in float64, so fusing or not
				// gives the same sums.
				fl := float64(laux[i])
				wl := wd[i] * fl
				sumL += wl
				sumL2 += wl * fl
				sumXL += wl * float64(x[i])
			}
			D := math.FMA(sumW, sumL2, -(sumL * sumL))
			if D <= 0 {
				continue
			}
			// GCC fuses the second product here, the first one in D and thisMin.
			thisScale := math.FMA(-sumX, sumL, sumW*sumXL) / D
			thisMin := math.FMA(sumL2, sumX, -(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var mad float64
			if useMAD {
				for i, v := range x {
					diff := math.Abs(math.FMA(thisScale, float64(laux[i]), thisMin) - float64(v))
					mad = math.FMA(wd[i], diff, mad)
				}
			} else {
				mad = quadraticError(thisScale, thisMin, sumX2, sumXL, sumX, sumL, sumL2, sumW)
			}
			if mad < bestMAD {
				copy(L, laux)
				bestMAD = mad
				scale = float32(thisScale)
				if m := float32(thisMin); m != min {
					min = m
					setDiffs(xm, x, min)
				}
			}
		}
	}
	if useMAD {
		return scale, -min
	}
	return qkx3Refine(s.asm(), nmax, x, wd, L, scale, min, sumW, sumX, sumX2)
}

// qkx3Refine is the greedy refinement that ends MakeQkx3Quants (without
// useMAD): single steps of one quant while the fit's score improves. It
// returns the scale and the min as the non-negative offset.
func qkx3Refine(asm bool, nmax int, x []float32, wd []float64, L []uint8, scale, min float32, sumW, sumX, sumX2 float64) (float32, float32) {
	n := len(x)
	var sumL, sumL2, sumXL float64
	for i, v := range x {
		wl := wd[i] * float64(L[i])
		sumL += wl
		sumL2 += wl * float64(L[i])
		sumXL += wl * float64(v)
	}
	best := gain(float64(scale), float64(min), sumXL, sumX, sumL, sumL2, sumW)
	lastJ, lastDir := -1, 0
	scanSIMD := asm && n%8 == 0 && n <= 64
	for itry := 0; itry < nmax*n; itry++ {
		var bestJ, dir int
		if scanSIMD {
			bestJ, dir = qkx3RefineScanSIMD(x, L, scale, min, nmax)
		} else {
			bestJ, dir = qkx3RefineScan(x, L, scale, min, nmax)
		}
		if bestJ < 0 || (bestJ == lastJ && dir == -lastDir) {
			break
		}
		w := wd[bestJ]
		fdir := float64(dir)
		sumL += w * fdir
		sumL2 += w * float64(2*int(L[bestJ])*dir+1)
		sumXL += w * float64(x[bestJ]) * fdir
		D := math.FMA(sumW, sumL2, -(sumL * sumL))
		if D <= 0 {
			break
		}
		thisScale := math.FMA(-sumX, sumL, sumW*sumXL) / D // second product fused, as above
		thisMin := math.FMA(sumL2, sumX, -(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		if thisScale < 0 {
			break
		}
		score := gain(thisScale, thisMin, sumXL, sumX, sumL, sumL2, sumW)
		if score <= best {
			break
		}
		best = score
		scale = float32(thisScale)
		min = float32(thisMin)
		L[bestJ] = uint8(int(L[bestJ]) + dir)
		lastJ, lastDir = bestJ, dir
	}
	return scale, -min
}

// qkx3Sums is what qkx3SumsAVX2 returns: the smallest and largest value (as
// MakeQkx3Quants' comparisons pick them) and Σw, Σw·x, Σw·x² in float64.
type qkx3Sums struct {
	min, max          float32
	sumW, sumX, sumX2 float64
}

// makeQkx3QuantsSIMD is MakeQkx3Quants without useMAD, with weights, for
// n <= 64 and nmax <= 31, nstep >= 1: the first pass over the values and
// the first quantization in assembly (scalar, in the same order and with the
// same fused operations), the trials by qkx3TrialsSIMD. ok is false, and
// nothing is written, when a value or a sum is not finite: the portable code
// then decides.
func makeQkx3QuantsSIMD(nmax int, x, weights []float32, L []uint8, rmin, rdelta float32, nstep int, fusedX2 bool) (scale, theMin float32, ok bool) {
	n := len(x)
	var wd, xd [64]float64
	var wbuf [64]float32
	w := weights
	if w == nil {
		w = wbuf[:n]
		for i, v := range x {
			w[i] = float32(v * v)
		}
	}
	var sums qkx3Sums
	qkx3SumsAVX2(&x[0], &w[0], n, fusedX2, &wd, &xd, &sums)
	min, max := sums.min, sums.max
	if !finite64(sums.sumX) || !finite64(float64(min)) || !finite64(float64(max)) {
		return 0, 0, false
	}
	if min > 0 {
		min = 0
	}
	if max-min < 1e-10 {
		clear(L)
		return 0, -min, true
	}
	fnmax := float32(nmax)
	iscale := fnmax / (max - min)
	scale = 1 / iscale
	// min <= every value, so the differences are non-negative and the
	// products below nmax: the assembly rounds them as roundProd.
	bestMAD := qkx3FirstErrorAVX2(&x[0], &wd[0], n, iscale, min, scale, fnmax, &L[0])
	scale, min = qkx3TrialsSIMD(nmax, x, wd[:n], &xd, L, rmin, rdelta, nstep, max, min, scale, bestMAD, sums.sumW, sums.sumX, sums.sumX2)
	scale, theMin = qkx3Refine(true, nmax, x, wd[:n], L, scale, min, sums.sumW, sums.sumX, sums.sumX2)
	return scale, theMin, true
}

// finite64 reports whether v is neither infinite nor NaN.
func finite64(v float64) bool {
	return v-v == 0
}

// qkx3RefineScan finds the step of one refinement iteration of
// MakeQkx3Quants: the first index with the largest |g|, g = fma(-scale, L,
// x) - min, among those whose quant can move by one in g's direction, and
// that direction; bestJ is -1 when there is none.
func qkx3RefineScan(x []float32, L []uint8, scale, min float32, nmax int) (bestJ, dir int) {
	L = L[:len(x)]
	var gmax float32
	bestJ = -1
	for j, v := range x {
		// fma32, written out so that the loop stays call-free
		gs := float64(-scale)*float64(L[j]) + float64(v)
		g := float32(gs)
		if math.Float64bits(gs)<<35 == 1<<63 {
			g = FMA32(-scale, float32(L[j]), v)
		}
		g -= min
		if g > 0 && int(L[j]) < nmax && g > gmax {
			gmax, bestJ, dir = g, j, 1
		} else if g < 0 && L[j] > 0 && -g > gmax {
			gmax, bestJ, dir = -g, j, -1
		}
	}
	return bestJ, dir
}

// qkx3RefineScanSIMD is qkx3RefineScan by qkx3RefineScanAVX2 (len(x) a
// multiple of 8, at most 64): the direction is the sign of the chosen g.
func qkx3RefineScanSIMD(x []float32, L []uint8, scale, min float32, nmax int) (bestJ, dir int) {
	bestJ = qkx3RefineScanAVX2(&x[0], &L[0], len(x), -scale, min, float32(nmax))
	if bestJ < 0 {
		return -1, 0
	}
	if FMA32(-scale, float32(L[bestJ]), x[bestJ])-min < 0 {
		return bestJ, -1
	}
	return bestJ, 1
}

// qkx3TrialsSIMD is the trial loop of MakeQkx3Quants (without useMAD) with
// the sums of eight consecutive trials computed at once by qkx3Trials8AVX2,
// or sixteen by qkx3Trials16AVX512 where qkx3Wide (one trial per lane, each
// sum in index order, as in the portable loop), then compared in order. A
// call's trials use the min in effect when it starts (nums has room for
// sixteen trials from any start); when a trial wins with a new min, the
// trials after it are computed again from there. Trials whose quants repeat
// the previous trial's are not skipped here: they cannot win, so computing
// them changes nothing. n is at most 64.
func qkx3TrialsSIMD(nmax int, x []float32, wd []float64, xd *[64]float64, L []uint8, rmin, rdelta float32, nstep int, max, min, scale float32, bestMAD, sumW, sumX, sumX2 float64) (float32, float32) {
	nums := qkx3TrialNumerators(nmax, rmin, rdelta, nstep)
	// The quants of the best trial are stored in L at the end, from its
	// iscale and the min its quants were computed with.
	bestIscale, bestMin, improved := float32(0), min, false
	var lanes qkx3Lanes
	for is := 0; is <= nstep; {
		// Lanes outside the mask fail the test below already against this
		// bestMAD, so they fail it against any later (smaller) one. (Direct
		// calls: through a func value, lanes would escape to the heap.)
		var mask uint32
		width := 8
		if qkx3Wide {
			mask = qkx3Trials16AVX512(&nums[is], max-min, &x[0], min, &wd[0], xd, len(x), float32(nmax), sumW, sumX, sumX2, bestMAD, &lanes)
			width = 16
		} else {
			mask = qkx3Trials8AVX2(&nums[is], max-min, &x[0], min, &wd[0], xd, len(x), float32(nmax), sumW, sumX, sumX2, bestMAD, &lanes)
		}
		if nstep+1-is < width {
			mask &= 1<<(nstep+1-is) - 1
		}
		next := is + width
		for ; mask != 0; mask &= mask - 1 {
			k := bits.TrailingZeros32(mask)
			if !(lanes.D[k] > 0) || !(lanes.mad[k] < bestMAD) {
				continue
			}
			bestIscale, bestMin, improved = lanes.iscale[k], min, true
			bestMAD = lanes.mad[k]
			scale = float32(lanes.scale[k])
			if m := float32(lanes.min[k]); m != min {
				min = m
				next = is + k + 1
				break
			}
		}
		is = next
	}
	if improved {
		storeTrialQuants(x, L, bestIscale, bestMin, nmax)
	}
	return scale, min
}

// storeTrialQuants stores in L the quants of the trial with iscale whose
// quants were computed against min: clamp(nearest(iscale·max(x - min, 0)),
// 0, nmax), eight at a time in assembly when len(x) allows.
func storeTrialQuants(x []float32, L []uint8, iscale, min float32, nmax int) {
	if len(x)%8 == 0 {
		qkx2QuantsAVX2(&x[0], len(x), iscale, min, float32(nmax), &L[0])
		return
	}
	for i, v := range x {
		d := v - min // as setDiffs32
		if d < 0 {
			d = 0
		}
		L[i] = uint8(clampInt(roundProd(iscale, d), 0, nmax))
	}
}

// qkx3Lanes is what qkx3Trials8AVX2 (qkx3Trials16AVX512) returns for each of
// its eight (sixteen) trials:
// the trial's iscale and, as MakeQkx3Quants computes them from the trial's
// sums, the determinant D, the least-squares scale and min (min clamped to at
// most 0) and the squared error. The values are meaningless where D <= 0.
type qkx3Lanes struct {
	iscale        [16]float32
	D, scale, min [16]float64
	mad           [16]float64
	//lint:ignore U1000 scratch of qkx3Trials8AVX2, used by the assembly only
	xm [64]float64
}

// qkx3Key identifies a table of trial numerators rmin + rdelta*is + nmax.
type qkx3Key struct {
	nmax         int
	rmin, rdelta float32
	nstep        int
}

// qkx3Numerators holds the numerators of the trial scales of the calls the
// quantizers make (rmin -0.9, rdelta 0.05, 36 steps), padded with the last
// one to a multiple of 8 plus 8.
var qkx3Numerators = map[qkx3Key]*[qkx3MaxTrials]float32{}

// qkx3MaxTrials bounds nstep+1 for the SIMD trial loop, padding included.
const qkx3MaxTrials = 64

// qkx3ImatrixNumerators holds the same tables by nmax, for a lookup without
// hashing in the hot path.
var qkx3ImatrixNumerators [32]*[qkx3MaxTrials]float32

func init() {
	for nmax := 1; nmax <= 31; nmax++ {
		k := qkx3Key{nmax, -0.9, 0.05, 36}
		qkx3Numerators[k] = computeQkx3Numerators(k)
		qkx3ImatrixNumerators[nmax] = qkx3Numerators[k]
	}
}

func computeQkx3Numerators(k qkx3Key) *[qkx3MaxTrials]float32 {
	var t [qkx3MaxTrials]float32
	for is := range t {
		t[is] = FMA32(k.rdelta, float32(min(is, k.nstep)), k.rmin) + float32(k.nmax)
	}
	return &t
}

func qkx3TrialNumerators(nmax int, rmin, rdelta float32, nstep int) *[qkx3MaxTrials]float32 {
	if rmin == -0.9 && rdelta == 0.05 && nstep == 36 && nmax > 0 && nmax < len(qkx3ImatrixNumerators) {
		return qkx3ImatrixNumerators[nmax]
	}
	for _, t := range &qkx2PlainNumerators {
		if t.key == (qkx3Key{nmax, rmin, rdelta, nstep}) {
			return t.nums
		}
	}
	k := qkx3Key{nmax, rmin, rdelta, nstep}
	if t, ok := qkx3Numerators[k]; ok {
		return t
	}
	return computeQkx3Numerators(k)
}

// setDiffs32 is setDiffs into float32.
func setDiffs32(xm []float32, x []float32, min float32) {
	xm = xm[:len(x)]
	for i, v := range x {
		xm[i] = max(v-min, 0)
	}
}

// setDiffs stores x - min (rounded to float32, as the reference computes it)
// in xm for quantizeUpTo. Negative differences, left when min moved up to a
// trial's min, quantize to 0 as 0 does (the scales are positive), so they are
// stored as 0 and quantizeUpTo needs no lower clamp.
func setDiffs(xm []float64, x []float32, min float32) {
	xm = xm[:len(x)]
	for i, v := range x {
		d := v - min
		if d < 0 {
			d = 0
		}
		xm[i] = float64(d)
	}
}

// quantizeUpTo stores nearest(iscale*x) clamped to at most hi for each x of
// xd (exact products, ties to even, as roundProd; iscale*x must be in
// [0, 2^31)).
func quantizeUpTo(q []uint8, xd []float64, iscale float32, hi int) {
	q = q[:len(xd)]
	s := float64(iscale)
	h := uint32(hi)
	i := 0
	for ; i+4 <= len(xd); i += 4 {
		x4 := xd[i : i+4 : i+4]
		q4 := q[i : i+4 : i+4]
		q4[0] = uint8(min(uint32(math.Float64bits(s*x4[0]+0x1.8p52)), h))
		q4[1] = uint8(min(uint32(math.Float64bits(s*x4[1]+0x1.8p52)), h))
		q4[2] = uint8(min(uint32(math.Float64bits(s*x4[2]+0x1.8p52)), h))
		q4[3] = uint8(min(uint32(math.Float64bits(s*x4[3]+0x1.8p52)), h))
	}
	for ; i < len(xd); i++ {
		q[i] = uint8(min(uint32(math.Float64bits(s*xd[i]+0x1.8p52)), h))
	}
}

// quantizeOffset stores nearest(iscale*x) + offset clamped to [0, hi] for
// each x of xd (exact products, ties to even, as roundProd; |iscale*x| +
// offset < 2^31).
func quantizeOffset(q []uint8, xd []float64, iscale float32, offset, hi int) {
	q = q[:len(xd)]
	s := float64(iscale)
	h := int32(hi)
	if offset%2 != 0 {
		// An odd offset in the rounding constant would turn ties to even
		// into ties to odd.
		for i, v := range xd {
			l := int32(uint32(math.Float64bits(s*v+0x1.8p52))) + int32(offset)
			q[i] = uint8(min(max(l, 0), h))
		}
		return
	}
	// With the (even) offset added to the rounding constant 1.5*2^52, the
	// low 32 bits of the sum are the rounded product plus offset.
	magic := 0x1.8p52 + float64(offset)
	i := 0
	for ; i+4 <= len(xd); i += 4 {
		x4 := xd[i : i+4 : i+4]
		q4 := q[i : i+4 : i+4]
		q4[0] = uint8(min(max(int32(uint32(math.Float64bits(s*x4[0]+magic))), 0), h))
		q4[1] = uint8(min(max(int32(uint32(math.Float64bits(s*x4[1]+magic))), 0), h))
		q4[2] = uint8(min(max(int32(uint32(math.Float64bits(s*x4[2]+magic))), 0), h))
		q4[3] = uint8(min(max(int32(uint32(math.Float64bits(s*x4[3]+magic))), 0), h))
	}
	for ; i < len(xd); i++ {
		q[i] = uint8(min(max(int32(uint32(math.Float64bits(s*xd[i]+magic))), 0), h))
	}
}

// quadraticError is Σw(s*l+m-x)² expanded over the sums, evaluated as the
// reference's single expression (each product fused into the running sum).
func quadraticError(s, m, sumX2, sumXL, sumX, sumL, sumL2, sumW float64) float64 {
	t := math.FMA(-(2 * s), sumXL, sumX2)
	t = math.FMA(-(2 * m), sumX, t)
	t = math.FMA(2*s*m, sumL, t)
	t = math.FMA(s*s, sumL2, t)
	return math.FMA(m*m, sumW, t)
}

// gain is the part of -Σw(s*l+m-x)² that depends on s and m, evaluated as the
// reference's expression: in the leading a*b + c*d only the first product is
// fused.
func gain(s, m, sumXL, sumX, sumL, sumL2, sumW float64) float64 {
	t := math.FMA(2*s, sumXL, 2*m*sumX)
	t = math.FMA(-(2 * s * m), sumL, t)
	t = math.FMA(-(s * s), sumL2, t)
	return math.FMA(-(m * m), sumW, t)
}

// MakeQpQuants is the reference's make_qp_quants: a search for a positive
// scale so that x ≈ scale*L, L in [0, nmax], for non-negative x (sub-block
// scales or mins), weighted by quantWeights, over 9 trial scales and up to
// five coordinate-descent passes. L receives len(x) values.
//
// The reference uses it with an imatrix to quantize the sub-block scales and
// mins of q2_K (nmax 15) and q4_K/q5_K (nmax 63), and in iq1_m/iq2 helpers.
// trial says how the trial scales' errors w*diff*diff are summed: the
// golden build's out-of-line clones that q2_K, q4_K and q5_K call
// (make_qp_quants.constprop.1 and .2) fuse the last product into the sum
// (FusedProducts; real rows of a requantized q8_0 model tell the two
// apart), the iq2 helpers get it inlined (RoundedProducts, as before).
func (s Search) MakeQpQuants(nmax int, x []float32, L []uint8, quantWeights []float32, trial Products) float32 {
	n := len(x)
	L = L[:n]
	quantWeights = quantWeights[:n]
	var max float32
	for _, v := range x {
		if !(max > v) {
			max = v
		}
	}
	if max < 1e-16 {
		clear(L)
		return 0
	}
	fnmax := float32(nmax)
	iscale := fnmax / max
	for i, v := range x {
		L[i] = uint8(NearestIntMul(iscale, v))
	}
	scale := 1 / iscale
	var bestMSE float32
	noNaN := true // the SIMD trials leave NaN values to the portable loop
	for i, v := range x {
		diff := FMA32(-scale, float32(L[i]), v)
		bestMSE = FMA32(float32(quantWeights[i]*diff), diff, bestMSE)
		noNaN = noNaN && v == v
	}
	if s.asm() && noNaN {
		// The eight trials at once, one per lane (qpTrialsAVX2), compared in
		// the same order.
		var mses [8]float32
		nums := qpTrialNumerators(nmax)
		qpTrialsAVX2(nums, max, &x[0], &quantWeights[0], n, int32(nmax), &mses, trial == FusedProducts)
		for k, mse := range mses {
			if mse < bestMSE {
				bestMSE = mse
				iscale = nums[k] / max
			}
		}
	} else {
		for is := -4; is <= 4; is++ {
			if is == 0 {
				continue
			}
			iscaleIs := FMA32(0.1, float32(is), fnmax) / max
			scaleIs := 1 / iscaleIs
			var mse float32
			for i, v := range x {
				l := min(nmax, NearestIntMul(iscaleIs, v))
				// The difference is fused; the sum in index order, of
				// (w*diff)*diff fused or rounded (trial), as qpTrialsAVX2's
				// lanes.
				diff := FMA32(-scaleIs, float32(l), v)
				if trial == FusedProducts {
					mse = FMA32(float32(quantWeights[i]*diff), diff, mse)
				} else {
					mse += float32(float32(quantWeights[i]*diff) * diff)
				}
			}
			if mse < bestMSE {
				bestMSE = mse
				iscale = iscaleIs
			}
		}
	}
	var sumlx, suml2 float32
	for i, v := range x {
		l := min(nmax, NearestIntMul(iscale, v))
		L[i] = uint8(l)
		w := quantWeights[i]
		fl := float32(l)
		sumlx = FMA32(float32(w*v), fl, sumlx)
		suml2 = FMA32(float32(w*fl), fl, suml2)
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w := quantWeights[i]
			li := float32(L[i])
			slx := FMA32(-float32(w*v), li, sumlx)
			sl2 := FMA32(-float32(w*li), li, suml2)
			if slx > 0 && sl2 > 0 {
				newL := min(nmax, NearestInt(float32(v*sl2)/slx))
				if newL != int(L[i]) {
					fl := float32(newL)
					slx = FMA32(float32(w*v), fl, slx)
					sl2 = FMA32(float32(w*fl), fl, sl2)
					if float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = uint8(newL)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	return sumlx / suml2
}

// qpNumerators holds, by nmax, the numerators nmax + 0.1*is (fused) of the
// eight trial scales of MakeQpQuants, is = -4..-1, 1..4.
var qpNumerators [64]*[8]float32

func init() {
	for nmax := range qpNumerators {
		qpNumerators[nmax] = computeQpNumerators(nmax)
	}
}

func computeQpNumerators(nmax int) *[8]float32 {
	var t [8]float32
	for k, is := range [8]int{-4, -3, -2, -1, 1, 2, 3, 4} {
		t[k] = FMA32(0.1, float32(is), float32(nmax))
	}
	return &t
}

func qpTrialNumerators(nmax int) *[8]float32 {
	if nmax >= 0 && nmax < len(qpNumerators) {
		return qpNumerators[nmax]
	}
	return computeQpNumerators(nmax)
}

// NearestIntMul is the reference's nearest_int(a*b) as GCC compiles it: the
// product is fused into the addition of the rounding constant, so the exact
// product is rounded (to nearest, ties to even) without first rounding it to
// float32.
func NearestIntMul(a, b float32) int {
	p := float64(a) * float64(b) // exact
	if math.Abs(p) < 4194304 {
		// Adding 1.5*2^52 rounds to an integer, ties to even, exactly; the
		// integer is then the low bits of the sum minus those of 1.5*2^52.
		return int(int64(math.Float64bits(p+0x1.8p52)) - 0x4338000000000000)
	}
	return nearestIntMulSlow(a, b)
}

// nearestIntMulSlow replays the reference's trick on the fused sum outside
// the range where it is a plain rounding.
func nearestIntMulSlow(a, b float32) int {
	x := FMA32(a, b, 12582912)
	return int(math.Float32bits(x)&0x007fffff) - 0x00400000
}

// roundProd is NearestIntMul for products known to be far inside the valid
// range (|a*b| < 2^22), as in the searches, where the scale is derived from
// the largest value: it is small enough to be inlined in the hot loops.
func roundProd(a, b float32) int {
	return int(int64(math.Float64bits(float64(a)*float64(b)+0x1.8p52)) - 0x4338000000000000)
}
