package legacy

import "github.com/gquant/gquant/quantize/kernel"

// TODO: move to kernel/search.go (as a variant of kernel.MakeQxQuants).
//
// makeQxQuantsWeighted is kernel.MakeQxQuants with importance weights and
// rmse type 1, but with the first least-squares loop fused (FMA) instead of
// vectorized. make_qx_quants is a static function that GCC inlines into each
// caller, and inlined into quantize_row_q4_0/q5_0/q6_0_impl its first loop
// (which also stores L) is compiled as scalar code with contraction, while
// the 38 trial loops are still vectorized. Matching the golden kernels proves
// it: with the first loop unfused 6 blocks of q4_0/q5_0/q6_0 (plain and
// imatrix) differ; fused, none does.
func makeQxQuantsWeighted(nmax int, x []float32, L []int8, qw []float32) float32 {
	n := len(x)
	L = L[:n]
	qw = qw[:n]
	weight := func(i int) float32 { return qw[i] }
	var max, amax float32
	for _, v := range x {
		if ax := kernel.Abs32(v); ax > amax {
			amax, max = ax, v
		}
	}
	if amax < kernel.GroupMaxEps {
		clear(L)
		return 0
	}
	fnmax := float32(nmax)
	iscale := float32(-nmax) / max
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(kernel.NearestIntMul(iscale, v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w := weight(i)
		fl := float32(l)
		// Not vectorized at these call sites: fused.
		sumlx = kernel.FMA32(float32(w*v), fl, sumlx)
		suml2 = kernel.FMA32(float32(w*fl), fl, suml2)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	bestSumlx, bestSuml2 := sumlx, suml2
	try := func(iscale float32) {
		var sumlx, suml2 float32
		for i, v := range x {
			l := clamp(kernel.NearestIntMul(iscale, v), -nmax, nmax-1)
			w := weight(i)
			fl := float32(l)
			// vectorized: rounded products, in-order sums
			sumlx += float32(float32(w*v) * fl)
			suml2 += float32(float32(w*fl) * fl)
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(nmax + clamp(kernel.NearestIntMul(iscale, v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
			bestSumlx, bestSuml2 = sumlx, suml2
		}
	}
	for is := -9; is <= 9; is++ {
		fis := float32(is)
		try(-kernel.FMA32(0.1, fis, fnmax) / max)
		try(kernel.FMA32(0.1, fis, fnmax-1) / max)
	}

	sumlx, suml2 = bestSumlx, bestSuml2
	for iter := 0; iter < n*(2*nmax-1); iter++ {
		var absGmax, gmax float32
		bestJ := -1
		for j, v := range x {
			w := weight(j)
			l := int(L[j]) - nmax
			g := float32(scale*w) * kernel.FMA32(-scale, float32(l), v)
			if (g > 0 && l < nmax-1) || (g < 0 && l > -nmax) {
				if ag := kernel.Abs32(g); ag > absGmax {
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
			newSumlx = kernel.FMA32(w, x[bestJ], newSumlx)
			newSuml2 = kernel.FMA32(w, float32(2*l+1), newSuml2)
			l++
		} else {
			newSumlx = kernel.FMA32(-w, x[bestJ], newSumlx)
			newSuml2 = kernel.FMA32(-w, float32(2*l-1), newSuml2)
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
func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }
