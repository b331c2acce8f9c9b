package kernel

import "math"

// The searches below are ports of the shared scale searches of the reference
// (ik_llama.cpp ggml/src/ggml-quants.c, plus the shorter make_qx_quants of
// ggml/src/iqk/iqk_quantize.cpp). They decide bit-exactness for most types, so
// the arithmetic follows what GCC emits for the reference build:
//
//   - a product whose only use is an addition or subtraction is fused
//     (FMA32 for float32, math.FMA for float64);
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
//     below (found with -fopt-info-vec on GCC 12, -march=skylake-avx512).

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
// without imatrix), q4_0/q5_0/q6_0 with an imatrix (nmax 8/16/32).
func MakeQxQuants(nmax int, x []float32, L []int8, rmseType int, qw []float32) float32 {
	n := len(x)
	L = L[:n]
	if qw != nil {
		qw = qw[:n]
	}
	var wbuf [64]float32
	weights := qw
	if weights == nil && rmseType != 0 {
		if n <= len(wbuf) {
			weights = wbuf[:n]
		} else {
			weights = make([]float32, n)
		}
		rt := rmseType
		if rt < 0 {
			rt = -rt
		}
		for i, v := range x {
			weights[i] = qxWeight(v, rt)
		}
	}
	weight := func(i int) float32 { return weights[i] }
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
	fnmax := float32(nmax)
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
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(roundProd(iscale, v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w := weight(i)
		fl := float32(l)
		// vectorized: rounded products, in-order sums
		sumlx += float32(float32(w*v) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	if returnEarly {
		if suml2 > 0 {
			return 0.5 * (scale + 1/iscale)
		}
		return 1 / iscale
	}
	best := scale * sumlx
	bestSumlx, bestSuml2 := sumlx, suml2
	try := func(iscale float32) {
		var sumlx, suml2 float32
		for i, v := range x {
			l := clampInt(roundProd(iscale, v), -nmax, nmax-1)
			w := weight(i)
			fl := float32(l)
			// vectorized: rounded products, in-order sums
			sumlx += float32(float32(w*v) * fl)
			suml2 += float32(float32(w*fl) * fl)
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(nmax + clampInt(roundProd(iscale, v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
			bestSumlx, bestSuml2 = sumlx, suml2
		}
	}
	for is := -9; is <= 9; is++ {
		fis := float32(is)
		try(-fma32(0.1, fis, fnmax) / max)
		try(fma32(0.1, fis, fnmax-1) / max)
	}

	sumlx, suml2 = bestSumlx, bestSuml2
	for iter := 0; iter < n*(2*nmax-1); iter++ {
		var absGmax, gmax float32
		bestJ := -1
		for j, v := range x {
			w := weight(j)
			l := int(L[j]) - nmax
			// fma32, written out so that the loop stays call-free
			ds := float64(-scale)*float64(l) + float64(v)
			diff := float32(ds)
			if math.Float64bits(ds)<<35 == 1<<63 {
				diff = FMA32(-scale, float32(l), v)
			}
			g := float32(scale*w) * diff
			if (g > 0 && l < nmax-1) || (g < 0 && l > -nmax) {
				if ag := Abs32(g); ag > absGmax {
					absGmax, gmax, bestJ = ag, g, j
				}
			}
		}
		if bestJ < 0 {
			break
		}
		newSumlx, newSuml2 := sumlx, suml2
		w := weight(bestJ)
		l := int(L[bestJ]) - nmax
		if gmax > 0 {
			newSumlx = fma32(w, x[bestJ], newSumlx)
			newSuml2 = fma32(w, float32(2*l+1), newSuml2)
			l++
		} else {
			newSumlx = fma32(-w, x[bestJ], newSumlx)
			newSuml2 = fma32(-w, float32(2*l-1), newSuml2)
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

// MakeQxQuantsIQK is the shorter make_qx_quants of iqk_quantize.cpp: the same
// symmetric search with weights qw (required), 18 trial scales and no
// refinement. The reference uses it for the block scales of the iqk types
// (iq2_k, iq3_k and relatives).
func MakeQxQuantsIQK(nmax int, x []float32, L []int8, qw []float32) float32 {
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
		sumlx = fma32(float32(qw[i]*v), fl, sumlx)
		suml2 = fma32(float32(qw[i]*fl), fl, suml2)
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
		iscale = -fma32(0.1, float32(is), fnmax) / max
		sumlx, suml2 = 0, 0
		for i, v := range x {
			l := clampInt(roundProd(iscale, v), -nmax, nmax-1)
			fl := float32(l)
			sumlx = fma32(float32(qw[i]*v), fl, sumlx)
			suml2 = fma32(float32(qw[i]*fl), fl, suml2)
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
func MakeQ3Quants(nmax int, x []float32, L []int8, doRMSE bool) float32 {
	n := len(x)
	L = L[:n]
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
			sumlx = fma32(float32(w*v), fl, sumlx)
			suml2 = fma32(float32(w*fl), fl, suml2)
		}
		for itry := 0; itry < 5; itry++ {
			changed := 0
			for i, v := range x {
				w := float32(v * v)
				li := float32(L[i])
				slx := fma32(-float32(w*v), li, sumlx)
				if slx > 0 {
					sl2 := fma32(-float32(w*li), li, suml2)
					newL := clampInt(NearestInt(float32(v*sl2)/slx), -nmax, nmax-1)
					if newL != int(L[i]) {
						fl := float32(newL)
						slx = fma32(float32(w*v), fl, slx)
						sl2 = fma32(float32(w*fl), fl, sl2)
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

// MakeQkx2Quants is the reference's make_qkx2_quants: an asymmetric search for
// scale and min so that x ≈ scale*L - min, L in [0, nmax], trying nstep+1
// scales (nmax + rmin + rdelta*is)/(max-min) and keeping the least weighted
// absolute (useMAD) or squared error. It returns scale and the min as a
// non-negative offset (the reference's *the_min). laux is scratch of len(x).
//
// The reference uses it without an imatrix: q2_K (16 values, nmax 3, MAD),
// q4_K (32 values, nmax 15), q5_K (32 values, nmax 31).
func MakeQkx2Quants(nmax int, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (scale, theMin float32) {
	n := len(x)
	L = L[:n]
	laux = laux[:n]
	weights = weights[:n]
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
		sumX = fma32(w, v, sumX)
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
		diff := fma32(scale, float32(l), min) - v
		if useMAD {
			diff = Abs32(diff)
		} else {
			diff = float32(diff * diff)
		}
		bestMAD = fma32(weights[i], diff, bestMAD)
	}
	if nstep < 1 {
		return scale, -min
	}
	for is := 0; is <= nstep; is++ {
		iscale = (fma32(rdelta, float32(is), rmin) + fnmax) / (max - min)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(roundProd(iscale, v-min), 0, nmax)
			laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			wl := float32(w * fl)
			sumL = fma32(w, fl, sumL)
			sumL2 = fma32(wl, fl, sumL2)
			sumXL = fma32(wl, v, sumXL)
		}
		D := fma32(sumW, sumL2, -float32(sumL*sumL))
		if D > 0 {
			// GCC fuses the second product here, the first one in D and thisMin.
			thisScale := fma32(-sumX, sumL, float32(sumW*sumXL)) / D
			thisMin := fma32(sumL2, sumX, -float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var mad float32
			for i, v := range x {
				diff := fma32(thisScale, float32(laux[i]), thisMin) - v
				if useMAD {
					diff = Abs32(diff)
				} else {
					diff = float32(diff * diff)
				}
				mad = fma32(weights[i], diff, mad)
			}
			if mad < bestMAD {
				copy(L, laux)
				bestMAD = mad
				scale = thisScale
				min = thisMin
			}
		}
	}
	return scale, -min
}

// MakeQkx3Quants is ik_llama's make_qkx3_quants: like MakeQkx2Quants but with
// the sums in float64, the squared error computed from the sums, and (without
// useMAD) a greedy one-step refinement of L afterwards. weights may be nil
// (then x² is used). laux is scratch of len(x).
//
// The reference uses it with an imatrix for q2_K (16 values, nmax 3), q4_K
// (32, nmax 15) and q5_K (32, nmax 31), and for q4_1/q5_1 with an imatrix.
func MakeQkx3Quants(nmax int, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (scale, theMin float32) {
	n := len(x)
	L = L[:n]
	laux = laux[:n]
	if weights != nil {
		weights = weights[:n]
	}
	if weights == nil {
		var wbuf [64]float32
		if n <= len(wbuf) {
			weights = wbuf[:n]
		} else {
			weights = make([]float32, n)
		}
		for i, v := range x {
			weights[i] = float32(v * v)
		}
	}
	weight := func(i int) float32 { return weights[i] }
	min, max := x[0], x[0]
	sumW := float64(weight(0))
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
		w := float64(weight(i))
		sumW += w
		sumX = math.FMA(w, float64(v), sumX)
		sumX2 = math.FMA(w*float64(v), float64(v), sumX2)
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
		bestMAD = math.FMA(float64(weight(i)), diff, bestMAD)
	}
	if nstep < 1 {
		return scale, -min
	}
	for is := 0; is <= nstep; is++ {
		iscale = (fma32(rdelta, float32(is), rmin) + fnmax) / (max - min)
		var sumL, sumL2, sumXL float64
		for i, v := range x {
			l := clampInt(roundProd(iscale, v-min), 0, nmax)
			laux[i] = uint8(l)
			// w*l, w*l*l and w*l*x are exact in float64, so fusing or not
			// gives the same sums.
			wl := float64(weight(i)) * float64(l)
			sumL += wl
			sumL2 += wl * float64(l)
			sumXL += wl * float64(v)
		}
		D := math.FMA(sumW, sumL2, -(sumL * sumL))
		if D > 0 {
			// GCC fuses the second product here, the first one in D and thisMin.
			thisScale := math.FMA(-sumX, sumL, sumW*sumXL) / D // GCC fuses the second product here, the first in D and thisMin
			thisMin := math.FMA(sumL2, sumX, -(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var mad float64
			if useMAD {
				for i, v := range x {
					diff := math.Abs(math.FMA(thisScale, float64(laux[i]), thisMin) - float64(v))
					mad = math.FMA(float64(weight(i)), diff, mad)
				}
			} else {
				mad = quadraticError(thisScale, thisMin, sumX2, sumXL, sumX, sumL, sumL2, sumW)
			}
			if mad < bestMAD {
				copy(L, laux)
				bestMAD = mad
				scale = float32(thisScale)
				min = float32(thisMin)
			}
		}
	}
	if useMAD {
		return scale, -min
	}

	var sumL, sumL2, sumXL float64
	for i, v := range x {
		wl := float64(weight(i)) * float64(L[i])
		sumL += wl
		sumL2 += wl * float64(L[i])
		sumXL += wl * float64(v)
	}
	best := gain(float64(scale), float64(min), sumXL, sumX, sumL, sumL2, sumW)
	lastJ, lastDir := -1, 0
	for itry := 0; itry < nmax*n; itry++ {
		var gmax float32
		bestJ, dir := -1, 0
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
		if bestJ < 0 || (bestJ == lastJ && dir == -lastDir) {
			break
		}
		w := float64(weight(bestJ))
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
func MakeQpQuants(nmax int, x []float32, L []uint8, quantWeights []float32) float32 {
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
	for i, v := range x {
		diff := fma32(-scale, float32(L[i]), v)
		bestMSE = fma32(float32(quantWeights[i]*diff), diff, bestMSE)
	}
	for is := -4; is <= 4; is++ {
		if is == 0 {
			continue
		}
		iscaleIs := fma32(0.1, float32(is), fnmax) / max
		scaleIs := 1 / iscaleIs
		var mse float32
		for i, v := range x {
			l := min(nmax, NearestIntMul(iscaleIs, v))
			// vectorized: the difference is fused, the sum is in-order of
			// rounded products
			diff := fma32(-scaleIs, float32(l), v)
			mse += float32(float32(quantWeights[i]*diff) * diff)
		}
		if mse < bestMSE {
			bestMSE = mse
			iscale = iscaleIs
		}
	}
	var sumlx, suml2 float32
	for i, v := range x {
		l := min(nmax, NearestIntMul(iscale, v))
		L[i] = uint8(l)
		w := quantWeights[i]
		fl := float32(l)
		sumlx = fma32(float32(w*v), fl, sumlx)
		suml2 = fma32(float32(w*fl), fl, suml2)
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w := quantWeights[i]
			li := float32(L[i])
			slx := fma32(-float32(w*v), li, sumlx)
			sl2 := fma32(-float32(w*li), li, suml2)
			if slx > 0 && sl2 > 0 {
				newL := min(nmax, NearestInt(float32(v*sl2)/slx))
				if newL != int(L[i]) {
					fl := float32(newL)
					slx = fma32(float32(w*v), fl, slx)
					sl2 = fma32(float32(w*fl), fl, sl2)
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

// fma32 is FMA32 with the common case first: the float64 sum of the exact
// product and c rounds to the right float32 unless it sits exactly halfway
// between two float32 values; only then is the exact error term needed.
func fma32(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	if math.Float64bits(s)<<35 != 1<<63 { // not halfway between two float32
		return float32(s)
	}
	return FMA32(a, b, c)
}

// roundProd is NearestIntMul for products known to be far inside the valid
// range (|a*b| < 2^22), as in the searches, where the scale is derived from
// the largest value: it is small enough to be inlined in the hot loops.
func roundProd(a, b float32) int {
	return int(int64(math.Float64bits(float64(a)*float64(b)+0x1.8p52)) - 0x4338000000000000)
}
