package iqk

import (
	"github.com/gquant/gquant/quantize/internal/kernel"
	"math"

	"github.com/gquant/gquant/internal/tables"
)

// makeQxQuants picks a scale for the n values x (weights qw) on the integer
// grid -nmax..nmax-1, trying 19 candidate inverse scales; L receives the
// chosen levels offset by nmax. It is the reference's own (iqk) variant.
// GCC fuses every nearest_int(iscale*x[i]) there (the product into the
// addition of the rounding constant), so the exact product is rounded:
// kernel.NearestIntMul.
func makeQxQuants(nmax int, x []float32, L []int8, qw []float32) float32 {
	var maxv, amax float32
	finite := true
	for _, v := range x {
		a := abs32(v)
		if a > amax {
			amax, maxv = a, v
		}
		finite = finite && a <= math.MaxFloat32
	}
	if amax == 0 {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	fnmax := float32(nmax)
	iscale := -fnmax / maxv
	// The lanes need finite values: the reference's rounding trick turns an
	// infinite or NaN product into -nmax or 0, the lanes would not.
	if useWeightsAVX2 && amax > 1e-30 && finite {
		return makeQxQuantsAVX2(nmax, x, L, qw, maxv)
	}
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(kernel.NearestIntMul(iscale, v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		fl := float32(l)
		sumlx = kernel.FMA32(qw[i]*v, fl, sumlx)
		suml2 = kernel.FMA32(qw[i]*fl, fl, suml2)
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
		iscale = -kernel.FMA32(0.1, float32(is), fnmax) / maxv
		sumlx, suml2 = 0, 0
		for i, v := range x {
			fl := float32(clamp(kernel.NearestIntMul(iscale, v), -nmax, nmax-1))
			sumlx = kernel.FMA32(qw[i]*v, fl, sumlx)
			suml2 = kernel.FMA32(qw[i]*fl, fl, suml2)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i, v := range x {
				L[i] = int8(nmax + clamp(kernel.NearestIntMul(iscale, v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQxQuantsAVX2 is makeQxQuants with the sums of all 19 scales computed
// at once (qxTrialsAVX2, one scale per lane) and then compared in the same
// order; L is filled for the winner only. Needs |maxv| > 1e-30 and every x
// finite, so that every |iscale*x| stays below nmax+1 and the lanes round
// like kernel.NearestIntMul.
func makeQxQuantsAVX2(nmax int, x []float32, L []int8, qw []float32, maxv float32) float32 {
	fnmax := float32(nmax)
	var iscales [24]float32
	iscales[0] = -fnmax / maxv
	lane := 1
	for is := -9; is <= 9; is++ {
		if is != 0 {
			iscales[lane] = -kernel.FMA32(0.1, float32(is), fnmax) / maxv
			lane++
		}
	}
	var sums [2][24]float32
	qxTrialsAVX2(&x[0], &qw[:len(x)][0], len(x), &iscales, fnmax, &sums)
	sumlx, suml2 := sums[0][0], sums[1][0]
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	win := 0
	for l := 1; l < 19; l++ {
		sumlx, suml2 = sums[0][l], sums[1][l]
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			scale = sumlx / suml2
			best = scale * sumlx
			win = l
		}
	}
	iscale := iscales[win]
	for i, v := range x {
		L[i] = int8(nmax + clamp(kernel.NearestIntMul(iscale, v), -nmax, nmax-1))
	}
	return scale
}

// sortedOrder fills idx with 0..len(x)-1 ordered by (x, index), the order
// std::sort gives pairs of (value, index). Blocks are 16 or 32 values: with
// AVX2 each value's place is its rank in that order, counted eight values
// at a time (sortRanksAVX2, which leaves a block with a NaN to the Go
// loop); else an insertion sort, as sort.Slice would allocate per block.
func sortedOrder(idx []int, x []float32) {
	x = x[:len(idx)]
	if n := len(x); useSplitSearchAVX2 && n > 0 && n%8 == 0 && sortRanksAVX2(&x[0], n, &idx[0]) {
		return
	}
	insertionOrder(idx, x)
}

// insertionOrder is sortedOrder by insertion: with a NaN among the values it
// keeps the order the comparisons give, as the reference's sort does.
func insertionOrder(idx []int, x []float32) {
	for j := range idx {
		idx[j] = j
		for k := j; k > 0; k-- {
			a, b := idx[k-1], idx[k]
			if x[a] < x[b] || (x[a] == x[b] && a < b) {
				break
			}
			idx[k-1], idx[k] = b, a
		}
	}
}

// prefixSums fills xs[j] with the j-th value in sorted order and sumw[j+1],
// sumx[j+1] with the weights and weighted values of the first j+1 of them,
// and returns sum w*|x| (float64), a bound on every |sumx| difference that
// splitSearch needs. fused says whether w*x is fused into the sum: GCC
// fuses it in iq2_k's quantize_row_iq2_k_impl, but not in iq2_ks's slow
// quantize_row_iq2_ks_impl (vmulss, then vaddss).
func prefixSums(xs, sumw, sumx []float32, order []int, xb, weight []float32, fused bool) (absSum float64) {
	sumw[0], sumx[0] = 0, 0
	for j, jj := range order {
		xs[j] = xb[jj]
		sumw[j+1] = sumw[j] + weight[jj]
		if fused {
			sumx[j+1] = kernel.FMA32(weight[jj], xb[jj], sumx[j])
		} else {
			sumx[j+1] = sumx[j] + mul(weight[jj], xb[jj])
		}
		absSum += float64(weight[jj]) * math.Abs(float64(xb[jj]))
	}
	return absSum
}

// iq2Variants are the four assignments of the 2-bit grid to the four
// segments of sorted values that the split search tries, in the reference's
// order: plain, shifted, plain reversed, shifted reversed.
var iq2Variants = func() (v [4][4]float32) {
	p, s := tables.IQ2NLValues[:4], tables.IQ2NLValues[4:]
	for j := 0; j < 4; j++ {
		v[0][j], v[1][j] = float32(p[j]), float32(s[j])
		v[2][j], v[3][j] = float32(p[3-j]), float32(s[3-j])
	}
	return
}()

// splitSearch is the exhaustive iq2 block search of the reference: values
// sorted, cut into four segments at i1 <= i2 <= i3 (i1 < maxI1, i3 >=
// minI3), each segment given one grid point, for each variant of the grid;
// the least-squares scale of the best split wins (the last strictly better
// one, compared in float32 exactly as the reference does).
//
// The result is bit-identical to evaluating every candidate exactly, but
// nearly all candidates are rejected by a cheap float64 test first. For
// fixed i1, i2 and variant, sumqx and sumq2 are (up to float32 rounding)
// linear in sumx[i3] and sumw[i3]. The test widens sumqx by errX, far beyond
// every rounding of the exact evaluation and of the linear model, and
// compares against best deflated by 1e-5 (plus an absolute floor for
// underflow); a candidate is skipped only when even then it cannot beat
// best. The test is off where the weighted values come near the float32
// underflow or overflow ranges, where relative error bounds do not hold.
//
// A second, global bound prunes most of the rest: splitGuess finds a split
// close to the best one and its float32 value L (as the reference computes
// best); candidates whose bound is below L*(1-1e-2) are skipped too, by
// using max(r, rL) for the running r. That leaves the result unchanged.
// While the reference's running best and ours differ, both stay below
// U = L*(1-1e-2)*(1+5*eps)^N (eps = 2^-24, N <= 24000 candidates: a
// skipped candidate it accepts is below L*(1-1e-2), and one it accepts but
// we reject, or the other way round, is worth at most (1+5*eps) times the
// side that rejected it). U < L*(1-4*eps), so both accept the guessed
// split, after which they agree; from then on the reference's best never
// falls below L*(1-4*eps)^N > L*(1-0.006), so it rejects everything below
// L*(1-1e-2) as well. TestSplitSearchPruning checks it.
func splitSearch(xs, sumx, sumw []float32, absSum float64, maxI1, minI3 int) (d float32, isShifted bool) {
	n := len(sumx) - 1
	sumx, sumw = sumx[:n+1], sumw[:n+1]
	sxN, swN := sumx[n], sumw[n]
	s := splitState{sumx: sumx, sumw: sumw}
	// Far from float32 underflow and overflow (sumqx^2 stays below 1e37).
	if !(absSum > 1e-18 && absSum < 1e16 && swN > 1e-30 && swN < 1e30) {
		for i1 := 0; i1 < maxI1; i1++ {
			for i2 := i1; i2 < n; i2++ {
				s.pair(i1, i2)
				for i3 := max(i2, minI3); i3 < n; i3++ {
					for k := range iq2Variants {
						s.eval(k, i3)
					}
				}
			}
		}
		return s.d, s.isShifted
	}
	errX := 31 * 4 * absSum * 1e-5
	e2 := errX*errX*(1+1e4) + 1e-40 // 1e-40: floor for float32 underflow
	var rL float64
	if g1, g2, g3, gk, ok := splitGuess(xs, sumx, sumw, maxI1, minI3); ok {
		g := splitState{sumx: sumx, sumw: sumw}
		g.pair(g1, g2)
		g.eval(gk, g3)
		rL = float64(g.best) * (1 - 1e-2) / (1 + 1e-4)
	}
	v := &iq2Variants
	dx0, dx1, dx2, dx3 := float64(v[0][2]-v[0][3]), float64(v[1][2]-v[1][3]), float64(v[2][2]-v[2][3]), float64(v[3][2]-v[3][3])
	sq := func(k, j int) float64 { return float64(v[k][j]) * float64(v[k][j]) }
	dq0, dq1, dq2, dq3 := sq(0, 2)-sq(0, 3), sq(1, 2)-sq(1, 3), sq(2, 2)-sq(2, 3), sq(3, 2)-sq(3, 3)
	if useSplitSearchAVX2 && n%4 == 0 && n <= 32 {
		return splitSearchFast(sumx, sumw, e2, rL, maxI1, minI3)
	}
	for i1 := 0; i1 < maxI1; i1++ {
		a0, b0 := float64(sumx[i1]-sumx[0]), float64(sumw[i1]-sumw[0])
		for i2 := i1; i2 < n; i2++ {
			a1, b1 := float64(sumx[i2]-sumx[i1]), float64(sumw[i2]-sumw[i1])
			start := max(i2, minI3)
			if start >= n {
				continue
			}
			// The linear models sumqx ~ cx + sumx[i3]*dx, sumq2 ~ cq + sumw[i3]*dq.
			x2, xN, w2, wN := float64(sumx[i2]), float64(sxN), float64(sumw[i2]), float64(swN)
			lin := func(k int) (cx, cq float64) {
				p := &v[k]
				v0, v1, v2, v3 := float64(p[0]), float64(p[1]), float64(p[2]), float64(p[3])
				return a0*v0 + a1*v1 - x2*v2 + xN*v3, b0*v0*v0 + b1*v1*v1 - w2*v2*v2 + wN*v3*v3
			}
			cx0, cq0 := lin(0)
			cx1, cq1 := lin(1)
			cx2, cq2 := lin(2)
			cx3, cq3 := lin(3)
			s.havePair = false
			// m_k < 0 below means variant k cannot beat best at i3. With
			// 2ab <= eta*a^2 + b^2/eta (eta = 1e-4),
			// (|X|+errX)^2 <= (1+eta) X^2 + (1+1/eta) errX^2, so it is enough
			// that X^2 + e2 < bq/(1+eta) * sumq2.
			bq := s.bq
			r := max(bq/(1+1e-4), rL)
			b0, b1, b2, b3 := r*cq0, r*cq1, r*cq2, r*cq3
			g0, g1, g2, g3 := r*dq0, r*dq1, r*dq2, r*dq3
			for i3 := start; i3 < n; i3++ {
				x, w := float64(sumx[i3]), float64(sumw[i3])
				x0, x1, x2, x3 := cx0+x*dx0, cx1+x*dx1, cx2+x*dx2, cx3+x*dx3
				m0 := x0*x0 + e2 - (b0 + w*g0)
				m1 := x1*x1 + e2 - (b1 + w*g1)
				m2 := x2*x2 + e2 - (b2 + w*g2)
				m3 := x3*x3 + e2 - (b3 + w*g3)
				if m0 >= 0 || m1 >= 0 || m2 >= 0 || m3 >= 0 {
					s.evalSome(i1, i2, i3, m0 >= 0, m1 >= 0, m2 >= 0, m3 >= 0)
					if s.bq != bq {
						bq = s.bq
						r = max(bq/(1+1e-4), rL)
						b0, b1, b2, b3 = r*cq0, r*cq1, r*cq2, r*cq3
						g0, g1, g2, g3 = r*dq0, r*dq1, r*dq2, r*dq3
					}
				}
			}
		}
	}
	return s.d, s.isShifted
}

// splitGuess returns a split and variant close to the best of splitSearch
// (within 1 % on nearly all blocks), for the global bound: per variant a
// few rounds of assigning the sorted values xs to the nearest point of the
// scaled grid (four contiguous segments) and refitting the scale, clamped
// to the search's limits. ok is false when no fit has a positive sumq2.
func splitGuess(xs, sumx, sumw []float32, maxI1, minI3 int) (i1, i2, i3, k int, ok bool) {
	n := len(sumx) - 1
	xs, sumx, sumw = xs[:n], sumx[:n+1], sumw[:n+1]
	var bestF float32
	for kk := range iq2Variants {
		v := &iq2Variants[kk]
		h0, h1, h2 := (v[0]+v[1])/2, (v[1]+v[2])/2, (v[2]+v[3])/2
		// Lowest value to the first grid point, highest to the last.
		d := (xs[n-1] - xs[0]) / (v[3] - v[0])
		p1, p2, p3 := -1, -1, -1
		for range 2 {
			m0, m1, m2 := d*h0, d*h1, d*h2
			j1 := 0
			for j1 < n && xs[j1] < m0 {
				j1++
			}
			j2 := j1
			for j2 < n && xs[j2] < m1 {
				j2++
			}
			j3 := j2
			for j3 < n && xs[j3] < m2 {
				j3++
			}
			j3 = max(min(j3, n-1), minI3)
			j1 = min(j1, maxI1-1, j3)
			j2 = max(min(j2, j3), j1)
			if j1 == p1 && j2 == p2 && j3 == p3 {
				break // converged
			}
			p1, p2, p3 = j1, j2, j3
			x1, x2, x3, xN := sumx[j1], sumx[j2], sumx[j3], sumx[n]
			w1, w2, w3, wN := sumw[j1], sumw[j2], sumw[j3], sumw[n]
			X := x1*v[0] + (x2-x1)*v[1] + (x3-x2)*v[2] + (xN-x3)*v[3]
			Q := w1*v[0]*v[0] + (w2-w1)*v[1]*v[1] + (w3-w2)*v[2]*v[2] + (wN-w3)*v[3]*v[3]
			if !(Q > 0) {
				break
			}
			if f := X * X / Q; f > bestF || !ok {
				bestF, i1, i2, i3, k, ok = f, j1, j2, j3, kk, true
			}
			d = X / Q
		}
	}
	return
}

// splitState is the running state of splitSearch's exact evaluation.
type splitState struct {
	sumx, sumw []float32
	best, d    float32
	bq         float64 // best, deflated by 1e-5: the bound to beat
	isShifted  bool
	// Exact partial sums of the first two segments of the current i1, i2.
	i2       int
	havePair bool
	a0, a1   float32
	b0, b1   float32
	hx, hq   [4]float32
}

// pair sets the split points of the first two segments and their exact
// partial sums per variant, as the reference computes them.
func (s *splitState) pair(i1, i2 int) {
	s.i2, s.havePair = i2, true
	s.a0, s.b0 = s.sumx[i1]-s.sumx[0], s.sumw[i1]-s.sumw[0]
	s.a1, s.b1 = s.sumx[i2]-s.sumx[i1], s.sumw[i2]-s.sumw[i1]
	for k := range iq2Variants {
		v := &iq2Variants[k]
		s.hx[k] = kernel.FMA32(s.a0, v[0], mul(s.a1, v[1]))
		s.hq[k] = kernel.FMA32(s.b0*v[0], v[0], mul(s.b1*v[1], v[1]))
	}
}

// evalSome evaluates, in the reference's order, the variants flagged at i3.
//
//go:noinline
func (s *splitState) evalSome(i1, i2, i3 int, k0, k1, k2, k3 bool) {
	if !s.havePair {
		s.pair(i1, i2)
	}
	for k, ok := range [4]bool{k0, k1, k2, k3} {
		if ok {
			s.eval(k, i3)
		}
	}
}

// eval is one candidate of the reference's search, in its float32
// arithmetic: the split (current i1, i2 and i3) with variant k.
func (s *splitState) eval(k, i3 int) {
	v := &iq2Variants[k]
	n := len(s.sumx) - 1
	a2, a3 := s.sumx[i3]-s.sumx[s.i2], s.sumx[n]-s.sumx[i3]
	b2, b3 := s.sumw[i3]-s.sumw[s.i2], s.sumw[n]-s.sumw[i3]
	sumqx := kernel.FMA32(a3, v[3], kernel.FMA32(a2, v[2], s.hx[k]))
	sumq2 := kernel.FMA32(b3*v[3], v[3], kernel.FMA32(b2*v[2], v[2], s.hq[k]))
	if sumq2 > 0 && sumqx*sumqx > s.best*sumq2 {
		s.d = sumqx / sumq2
		s.best = s.d * sumqx
		s.bq = float64(s.best) * (1 - 1e-5)
		s.isShifted = k&1 == 1
	}
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
	values := tables.IQ2NLValues[:4]
	shiftedValues := tables.IQ2NLValues[4:]
	var weight [bs]float32
	var sumx, sumw [bs + 1]float32
	var scales, sw [sbs / bs]float32
	var Ls [sbs / bs]int8
	var order [bs]int
	var xs [bs]float32
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
		// Without importance, GCC rounds x*x before adding sigma2/4 in both
		// of the reference's weight loops (vmulss, then vaddss or a fused
		// 0.25*sigma2 + x2, whose product is exact).
		fallback := sigmaWeightUnfused(sigma2)
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
			absSum := prefixSums(xs[:], sumw[:], sumx[:], order[:], xb, weight[:], true)
			d, isShifted := splitSearch(xs[:], sumx[:], sumw[:], absSum, bs, 0)
			scales[ib] = d
			if isShifted {
				extra |= 1 << ib
			}
			maxAbsScale = stdMax(maxAbsScale, abs32(d)) // std::max
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
			// nearest_int(id*scales[ib]) with the product fused (GCC).
			ls := clamp(kernel.NearestIntMul(id, scales[ib]), -8, 7)
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
				sumqx = kernel.FMA32(wq, xb[j], sumqx)
				sumq2 = kernel.FMA32(wq, q, sumq2)
			}
		}
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		put16(blk[0:], fp16(1.030*d))
	}
}
