package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The assembly trial loops must give exactly what the portable loops give:
// the portable code is the reference (checked against the golden data on
// every machine, with -tags purego too). These tests run both on the same
// random inputs and compare bits.

// randomBlock returns n values of one of a few shapes: normal weights, a
// heavy tail, values on a coarse grid (many exact rounding ties) and blocks
// with zeros or only positive values.
func randomBlock(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	shape := r.IntN(5)
	step := float32(math.Ldexp(1, -r.IntN(8)))
	for i := range x {
		switch shape {
		case 0:
			x[i] = float32(0.02 * r.NormFloat64())
		case 1:
			x[i] = float32(r.NormFloat64() * math.Exp(2*r.NormFloat64()))
		case 2:
			x[i] = step * float32(r.IntN(17)-8) / 2
		case 3:
			x[i] = float32(1 + 0.1*r.NormFloat64())
		default:
			if r.IntN(3) > 0 {
				x[i] = float32(r.NormFloat64())
			}
		}
	}
	return x
}

func randomWeights(r *rand.Rand, n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(r.ExpFloat64() * math.Exp(r.NormFloat64()))
		if r.IntN(10) == 0 {
			w[i] = float32(math.Ldexp(1, -r.IntN(30)))
		}
	}
	return w
}

// nearTies replaces some values of x by values whose product with scale
// lies within a float32 rounding of k + 0.5: rounding the product before
// adding the rounding constant would then pick the other integer, so these
// catch a product that is not fused.
func nearTies(r *rand.Rand, x []float32, scale float32, nmax int) {
	for i := range x {
		if r.IntN(2) == 0 {
			continue
		}
		t := float64(r.IntN(2*nmax)-nmax) + 0.5
		v := float32(t / float64(scale))
		bits := math.Float32bits(v)
		for d := -2; d <= 2; d++ {
			c := math.Float32frombits(uint32(int64(bits) + int64(d)))
			p := float64(c) * float64(scale)
			if float64(float32(p)) == t && p != t {
				v = c
				break
			}
		}
		x[i] = v
	}
}

// withPortable runs f with the assembly disabled.
func withPortable(f func()) {
	saved := useAVX2
	useAVX2 = false
	defer func() { useAVX2 = saved }()
	f()
}

// comparePortable runs quantize on fresh quants (all preset to 99, so that
// quants left unwritten compare too) with the assembly, then again without
// it, and describes the first difference in the returned results or quants,
// bit for bit; "" when there is none.
func comparePortable[Q int8 | uint8](n int, quantize func(L []Q) []float32) string {
	run := func() ([]float32, []Q) {
		L := make([]Q, n)
		for i := range L {
			L[i] = 99
		}
		return quantize(L), L
	}
	got, gotL := run()
	var want []float32
	var wantL []Q
	withPortable(func() { want, wantL = run() })
	same := slices.EqualFunc(got, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) })
	if same && slices.Equal(gotL, wantL) {
		return ""
	}
	return fmt.Sprintf("%v %v; portable %v %v", got, gotL, want, wantL)
}

// nearFirstTies moves values of x near rounding ties of the first
// quantization of MakeQxQuants and MakeQ3Quants, at -nmax/max with max the
// value of largest magnitude.
func nearFirstTies(r *rand.Rand, x []float32, nmax int) {
	var max, amax float32
	for _, v := range x {
		if Abs32(v) > amax {
			amax, max = Abs32(v), v
		}
	}
	if amax > 0 {
		nearTies(r, x, float32(-nmax)/max, nmax)
	}
}

func TestQxTrialSumsAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 3000; iter++ {
		n := 1 + r.IntN(64)
		nmax := 1 + r.IntN(32)
		x, w := randomBlock(r, n), randomWeights(r, n)
		var nums, scales, sumlx, suml2 [qxLanes]float32
		max := float32(1)
		if iter%2 == 1 {
			max = float32(r.NormFloat64())
		}
		for k := range nums {
			nums[k] = float32(r.NormFloat64() * float64(nmax))
			if k%3 == 0 { // powers of two: exact ties on the grid shapes
				nums[k] = float32(math.Ldexp(1-2*float64(r.IntN(2)), r.IntN(10)))
			}
		}
		if iter%2 == 0 {
			nearTies(r, x, nums[1], nmax)
		}
		wx := make([]float32, n)
		xd := make([]float64, n)
		for i, v := range x {
			wx[i] = float32(w[i] * v)
			xd[i] = float64(v)
		}
		best := float32(r.ExpFloat64())
		mask := qxTrialSumsAVX2(&nums, max, &x[0], &w[0], &wx[0], n, float32(-nmax), float32(nmax-1), best, &scales, &sumlx, &suml2)
		q := make([]uint8, n)
		for k, s := range scales {
			if want := nums[k] / max; math.Float32bits(s) != math.Float32bits(want) {
				t.Fatalf("iter %d lane %d: scale %v, want %v", iter, k, s, want)
			}
			pass := suml2[k] > 0 && float32(sumlx[k]*sumlx[k]) > float32(best*suml2[k])
			if (mask>>k&1 != 0) != pass {
				t.Fatalf("iter %d lane %d: mask bit %v, want %v", iter, k, mask>>k&1, pass)
			}
			quantizeOffset(q, xd, s, nmax, 2*nmax-1)
			wantLX, wantL2 := qxSums(q, w, wx, nmax)
			if math.Float32bits(sumlx[k]) != math.Float32bits(wantLX) || math.Float32bits(suml2[k]) != math.Float32bits(wantL2) {
				t.Fatalf("iter %d lane %d (n %d, nmax %d, scale %v): sums %v, %v; portable %v, %v", iter, k, n, nmax, s, sumlx[k], suml2[k], wantLX, wantL2)
			}
		}
	}
}

func TestMakeQxQuantsSIMDAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for iter := 0; iter < 20000; iter++ {
		n := []int{16, 32, 1 + r.IntN(64)}[r.IntN(3)]
		nmax := []int{4, 8, 16, 32, 1 + r.IntN(32)}[r.IntN(5)]
		x := randomBlock(r, n)
		var w []float32
		if r.IntN(4) > 0 {
			w = randomWeights(r, n)
		}
		if iter%3 == 0 {
			nearFirstTies(r, x, nmax)
		}
		rmseType := 1
		if iter%5 == 4 {
			rmseType = 2 + r.IntN(3) // weights 1, |x|, sqrt|x| (only without w)
		}
		diff := comparePortable(n, func(L []int8) []float32 { return []float32{search.MakeQxQuants(nmax, x, L, rmseType, w)} })
		if diff != "" {
			t.Fatalf("iter %d (n %d, nmax %d, rmse type %d): %s", iter, n, nmax, rmseType, diff)
		}
	}
}

// TestMakeQkx3QuantsSIMDAgrees holds MakeQkx3Quants with the assembly
// trial loops, eight trials per pass and (with AVX-512) sixteen, to the
// portable loop on random blocks, weights now and then non-finite.
func TestMakeQkx3QuantsSIMDAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	// Both trial loops, whichever this CPU runs.
	widths := []bool{false}
	if useAVX512 {
		widths = append(widths, true)
	}
	defer func(w bool) { qkx3Wide = w }(qkx3Wide)
	for _, wide := range widths {
		qkx3Wide = wide
		t.Run(map[bool]string{false: "8", true: "16"}[wide], testMakeQkx3QuantsSIMDAgrees)
	}
}

func testMakeQkx3QuantsSIMDAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for iter := 0; iter < 20000; iter++ {
		n := []int{16, 32, 8 * (1 + r.IntN(8)), 1 + r.IntN(64)}[r.IntN(4)]
		nmax := []int{3, 15, 31, 1 + r.IntN(31)}[r.IntN(4)]
		x := randomBlock(r, n)
		var w []float32
		if r.IntN(4) > 0 {
			w = randomWeights(r, n)
		}
		if iter%50 == 0 { // non-finite values or weights, signed zeros
			special := []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 3e38}
			x[r.IntN(n)] = float32(special[r.IntN(len(special))])
			if w != nil {
				w[r.IntN(n)] = float32(special[r.IntN(len(special))])
			}
		}
		laux := make([]uint8, n)
		products := Products(r.IntN(2))
		diff := comparePortable(n, func(L []uint8) []float32 {
			d, m := search.MakeQkx3Quants(nmax, x, w, L, laux, -0.9, 0.05, 36, false, products)
			return []float32{d, m}
		})
		if diff != "" {
			t.Fatalf("iter %d (n %d, nmax %d, products %d): %s", iter, n, nmax, products, diff)
		}
	}
}

// TestQkx3SumsAVX2 holds the first pass of MakeQkx3Quants in assembly to the
// portable loop's sums, with Σw·x² fused (q2_K's inlined copy) and with
// rounded products (the out-of-line one), and checks that the two forms
// differ on full-mantissa values, so that a pass that ignores its flag
// fails.
func TestQkx3SumsAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(13, 14))
	differ := 0
	for iter := 0; iter < 5000; iter++ {
		n := 1 + r.IntN(64)
		x, w := randomBlock(r, n), randomWeights(r, n)
		var got [2]qkx3Sums
		for k, fused := range []bool{false, true} {
			var wd, xd [64]float64
			qkx3SumsAVX2(&x[0], &w[0], n, fused, &wd, &xd, &got[k])
			want := qkx3Sums{min: x[0], max: x[0], sumW: float64(w[0])}
			want.sumX = want.sumW * float64(x[0])
			want.sumX2 = want.sumX * float64(x[0])
			for i := 1; i < n; i++ {
				want.min, want.max = min(want.min, x[i]), max(want.max, x[i])
				wi, xi := float64(w[i]), float64(x[i])
				want.sumW += wi
				want.sumX += wi * xi
				if fused {
					want.sumX2 = math.FMA(wi*xi, xi, want.sumX2)
				} else {
					want.sumX2 += float64(wi * xi * xi)
				}
			}
			if got[k] != want {
				t.Fatalf("iter %d (n %d, fused %v): %+v, want %+v", iter, n, fused, got[k], want)
			}
			for i := 0; i < n; i++ {
				if wd[i] != float64(w[i]) || xd[i] != float64(x[i]) {
					t.Fatalf("iter %d: wd/xd[%d] = %g/%g", iter, i, wd[i], xd[i])
				}
			}
		}
		if got[0].sumX2 != got[1].sumX2 {
			differ++
		}
	}
	if differ == 0 {
		t.Error("fused and rounded Σw·x² never differ")
	}
}

// TestMakeQkx2QuantsSIMDAgrees covers the three calls of the quantizers
// (q2_K: MAD, fused Σw·x; q4_K and q5_K: squared error, rounded Σw·x) and
// random others, with the quantizers' weights (|x|, rms + |x|) or random
// ones, and values near rounding ties of the first trial.
func TestMakeQkx2QuantsSIMDAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	type call struct {
		n, nmax      int
		rmin, rdelta float32
		nstep        int
		useMAD       bool
		products     Products
	}
	calls := []call{
		{16, 3, -0.5, 0.1, 15, true, FusedProducts},
		{32, 15, -1, 0.1, 20, false, RoundedProducts},
		{32, 31, -0.5, 0.1, 15, false, RoundedProducts},
	}
	r := rand.New(rand.NewPCG(13, 14))
	for iter := 0; iter < 30000; iter++ {
		c := calls[iter%len(calls)]
		if iter%4 == 3 {
			c = call{1 + r.IntN(64), 1 + r.IntN(31), float32(-r.Float64()), float32(0.2 * r.Float64()), r.IntN(49), r.IntN(2) == 0, Products(r.IntN(2))}
		}
		x := randomBlock(r, c.n)
		if iter%3 == 0 {
			lo, hi := slices.Min(x), slices.Max(x)
			if hi > lo {
				nearTies(r, x, (float32(c.nmax)+c.rmin)/(hi-min(lo, 0)), c.nmax)
			}
		}
		w := make([]float32, c.n)
		switch r.IntN(3) {
		case 0:
			for i, v := range x {
				w[i] = Abs32(v)
			}
		case 1:
			var s2 float32
			for _, v := range x {
				s2 += v * v
			}
			rms := Sqrt32(s2 / float32(c.n))
			for i, v := range x {
				w[i] = rms + Abs32(v)
			}
		default:
			w = randomWeights(r, c.n)
		}
		laux := make([]uint8, c.n)
		diff := comparePortable(c.n, func(L []uint8) []float32 {
			d, m := search.MakeQkx2Quants(c.nmax, x, w, L, laux, c.rmin, c.rdelta, c.nstep, c.useMAD, c.products)
			return []float32{d, m}
		})
		if diff != "" {
			t.Fatalf("iter %d (%+v) x %v w %v: %s", iter, c, x, w, diff)
		}
	}
}

// qkx2TrialPortable is one trial of MakeQkx2Quants' portable loop: the
// quants of xm at iscale and, from their sums, D, the fit and its error.
func qkx2TrialPortable(x, w, xm []float32, iscale float32, nmax int, sumW, sumX float32, useMAD bool) (l []uint8, D, scale, min, mad float32) {
	xd := make([]float64, len(xm))
	for i, v := range xm {
		xd[i] = float64(v)
	}
	l = make([]uint8, len(x))
	quantizeUpTo(l, xd, iscale, nmax)
	var sumL, sumL2, sumXL float32
	for i, q := range l {
		fl := float32(q)
		wl := float32(w[i] * fl)
		sumL += wl
		sumL2 = FMA32(wl, fl, sumL2)
		sumXL = FMA32(wl, x[i], sumXL)
	}
	D = FMA32(sumW, sumL2, -float32(sumL*sumL))
	scale = FMA32(-sumX, sumL, float32(sumW*sumXL)) / D
	min = FMA32(sumL2, sumX, -float32(sumL*sumXL)) / D
	if min > 0 {
		min = 0
		scale = sumXL / sumL2
	}
	return l, D, scale, min, qkx2ErrorPortable(x, w, l, scale, min, useMAD)
}

// qkx2ErrorPortable is the weighted error of scale·l + min as
// MakeQkx2Quants computes it.
func qkx2ErrorPortable(x, w []float32, l []uint8, scale, min float32, useMAD bool) float32 {
	var mad float32
	for i, v := range x {
		diff := FMA32(scale, float32(l[i]), min) - v
		if useMAD {
			diff = Abs32(diff)
		} else {
			diff = float32(diff * diff)
		}
		mad = FMA32(w[i], diff, mad)
	}
	return mad
}

// The per-trial results of the assembly, lane by lane: the search itself
// rarely depends on the last bit of an error, so it is checked here.
func TestQkx2Trials16AVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(15, 16))
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for iter := 0; iter < 5000; iter++ {
		n := []int{16, 32, 1 + r.IntN(64)}[r.IntN(3)]
		nmax := []int{3, 15, 31, 1 + r.IntN(31)}[r.IntN(4)]
		useMAD := r.IntN(2) == 0
		x, w := randomBlock(r, n), randomWeights(r, n)
		lo, hi := min(slices.Min(x), 0), slices.Max(x)
		if hi <= lo {
			continue
		}
		if iter%2 == 0 {
			nearTies(r, x, float32(nmax)/(hi-lo), nmax)
			lo, hi = min(slices.Min(x), 0), slices.Max(x)
			if hi <= lo {
				continue
			}
		}
		// a trial's min: at most 0, above or below the smallest value
		m := lo
		if r.IntN(2) == 0 {
			m = float32(float64(lo) * 2 * r.Float64())
		}
		if m >= hi {
			m = lo
		}
		var sumW, sumX float32
		for i, v := range x {
			sumW += w[i]
			sumX += float32(w[i] * v)
		}
		var xm [64]float32
		setDiffs32(xm[:n], x, m)
		var nums [qkx2Lanes16]float32
		for k := range nums { // as nmax + rmin + rdelta·is: not negative
			nums[k] = max(0, float32(nmax)+float32(2*r.Float64()-1))
		}
		bestMAD := float32(r.ExpFloat64())
		var lanes qkx2Lanes
		var mask uint32
		lanesN := qkx2Lanes16
		if iter%3 == 2 {
			lanesN = 8
			mask = qkx2Trials8AVX2(&nums[0], hi-m, &x[0], &w[0], n, m, float32(nmax), sumW, sumX, useMAD, bestMAD, &lanes)
		} else {
			mask = qkx2Trials16AVX2(&nums[0], hi-m, &x[0], &w[0], n, m, float32(nmax), sumW, sumX, useMAD, bestMAD, &lanes)
		}
		for k, num := range nums[:lanesN] {
			iscale := num / (hi - m)
			_, D, scale, mn, mad := qkx2TrialPortable(x, w, xm[:n], iscale, nmax, sumW, sumX, useMAD)
			if !same(lanes.iscale[k], iscale) || !same(lanes.D[k], D) ||
				D > 0 && (!same(lanes.scale[k], scale) || !same(lanes.min[k], mn) || !same(lanes.mad[k], mad)) {
				t.Fatalf("iter %d lane %d (n %d, nmax %d, MAD %v): iscale %v D %v fit %v %v error %v; portable %v %v %v %v %v",
					iter, k, n, nmax, useMAD, lanes.iscale[k], lanes.D[k], lanes.scale[k], lanes.min[k], lanes.mad[k], iscale, D, scale, mn, mad)
			}
			if want := D > 0 && mad < bestMAD; (mask>>k&1 != 0) != want {
				t.Fatalf("iter %d lane %d: mask bit %v, want %v (D %v error %v best %v)", iter, k, mask>>k&1, want, D, mad, bestMAD)
			}
		}
		if mask>>lanesN != 0 {
			t.Fatalf("iter %d: mask %#x beyond %d lanes", iter, mask, lanesN)
		}

		// The first pass: extremes and sums, fused or not.
		for _, fused := range []bool{false, true} {
			var sums qkx2Sums
			qkx2SumsAVX2(&x[0], &w[0], n, fused, &sums)
			wantMin, wantMax, wantW, wantX := x[0], x[0], w[0], float32(w[0]*x[0])
			for i := 1; i < n; i++ {
				if x[i] < wantMin {
					wantMin = x[i]
				}
				if x[i] > wantMax {
					wantMax = x[i]
				}
				wantW += w[i]
				if fused {
					wantX = FMA32(w[i], x[i], wantX)
				} else {
					wantX += float32(w[i] * x[i])
				}
			}
			if !same(sums.min, wantMin) || !same(sums.max, wantMax) || !same(sums.sumW, wantW) || !same(sums.sumX, wantX) {
				t.Fatalf("iter %d sums (fused %v): %+v; portable %v %v %v %v", iter, fused, sums, wantMin, wantMax, wantW, wantX)
			}
		}

		// The first quantization, at the max-based scale.
		iscale := float32(nmax) / (hi - lo)
		scale := 1 / iscale
		got := make([]uint8, n)
		mad := qkx2FirstErrorAVX2(&x[0], &w[0], n, float32(nmax), iscale, scale, lo, useMAD, &got[0])
		want := make([]uint8, n)
		for i, v := range x {
			want[i] = uint8(clampInt(roundProd(iscale, v-lo), 0, nmax))
		}
		wantMAD := qkx2ErrorPortable(x, w, want, scale, lo, useMAD)
		if !same(mad, wantMAD) || !slices.Equal(got, want) {
			t.Fatalf("iter %d first error (n %d, nmax %d, MAD %v): %v %v; portable %v %v", iter, n, nmax, useMAD, mad, got, wantMAD, want)
		}
	}
}

// The refinement scan of MakeQkx3Quants, compared with the portable scan on
// random quants, including blocks where several values share the largest
// step (the first must win) and where no step is allowed.
func TestQkx3RefineScanAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for iter := 0; iter < 20000; iter++ {
		n := 8 * (1 + r.IntN(8))
		nmax := []int{3, 15, 31, 1 + r.IntN(31)}[r.IntN(4)]
		x := randomBlock(r, n)
		L := make([]uint8, n)
		for i := range L {
			switch r.IntN(4) {
			case 0:
				L[i] = 0
			case 1:
				L[i] = uint8(nmax)
			default:
				L[i] = uint8(r.IntN(nmax + 1))
			}
		}
		if iter%5 == 0 { // repeated values and quants: ties
			for i := range x {
				j := r.IntN(n)
				x[i], L[i] = x[j], L[j]
			}
		}
		scale := float32(r.ExpFloat64() * 0.01)
		if iter%7 == 0 {
			scale = float32(math.Ldexp(1, -r.IntN(8)))
		}
		mn := float32(0)
		if r.IntN(3) > 0 {
			mn = -float32(r.ExpFloat64() * 0.02)
		}
		gotJ, gotDir := qkx3RefineScanSIMD(x, L, scale, mn, nmax)
		wantJ, wantDir := qkx3RefineScan(x, L, scale, mn, nmax)
		if gotJ != wantJ || gotDir != wantDir {
			t.Fatalf("iter %d (n %d, nmax %d, scale %v, min %v): step %d %d; portable %d %d", iter, n, nmax, scale, mn, gotJ, gotDir, wantJ, wantDir)
		}
	}
}

// The refinement scan of MakeQxQuants, compared with the portable scan, with
// quants at both ends and repeated values (ties).
func TestQxRefineScanAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(19, 20))
	for iter := 0; iter < 20000; iter++ {
		n := 8 * (1 + r.IntN(8))
		nmax := []int{4, 8, 16, 32, 1 + r.IntN(32)}[r.IntN(5)]
		x, w := randomBlock(r, n), randomWeights(r, n)
		L := make([]int8, n)
		for i := range L {
			switch r.IntN(4) {
			case 0:
				L[i] = 0
			case 1:
				L[i] = int8(2*nmax - 1)
			default:
				L[i] = int8(r.IntN(2 * nmax))
			}
		}
		if iter%5 == 0 { // repeated values, weights and quants: ties
			for i := range x {
				j := r.IntN(n)
				x[i], w[i], L[i] = x[j], w[j], L[j]
			}
		}
		scale := float32(r.NormFloat64() * 0.01)
		if iter%7 == 0 {
			scale = float32(math.Ldexp(1, -r.IntN(8)))
		}
		gotJ, gotG := qxRefineScanSIMD(x, w, L, scale, nmax)
		wantJ, wantG := qxRefineScan(x, w, L, scale, nmax)
		if gotJ != wantJ || math.Float32bits(gotG) != math.Float32bits(wantG) {
			t.Fatalf("iter %d (n %d, nmax %d, scale %v): step %d %v; portable %d %v", iter, n, nmax, scale, gotJ, gotG, wantJ, wantG)
		}
	}
}

// TestMakeQpQuantsSIMDAgrees compares MakeQpQuants with its SIMD trials
// against the portable loop: the quantizers' calls (16 or 8 non-negative
// scales, nmax 15 and 63) and random others, with values on a grid (rounding
// ties), zeros, infinities and NaN.
func TestMakeQpQuantsSIMDAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(13, 14))
	for iter := 0; iter < 20000; iter++ {
		n := []int{16, 8, 1 + r.IntN(64)}[r.IntN(3)]
		nmax := []int{15, 63, 1 + r.IntN(70)}[r.IntN(3)]
		x := randomBlock(r, n)
		for i := range x {
			if r.IntN(4) > 0 {
				x[i] = Abs32(x[i])
			}
		}
		if iter%100 == 0 {
			x[r.IntN(n)] = float32([]float64{math.Inf(1), math.Inf(-1), math.NaN(), 0}[r.IntN(4)])
		}
		w := randomWeights(r, n)
		diff := comparePortable(n, func(L []uint8) []float32 { return []float32{search.MakeQpQuants(nmax, x, L, w, Products(iter%2))} })
		if diff != "" {
			t.Fatalf("iter %d (n %d, nmax %d): %s", iter, n, nmax, diff)
		}
	}
}

// TestMakeQ3QuantsSIMDAgrees compares the assembly make_q3_quants with the
// portable one on q3_K's calls (16 values, nmax 4) and random others,
// including values near rounding ties of the first quantization and
// all-but-zero blocks.
func TestMakeQ3QuantsSIMDAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for iter := 0; iter < 30000; iter++ {
		n, nmax := 16, 4
		if iter%4 == 3 {
			n, nmax = 1+r.IntN(64), 1+r.IntN(31)
		}
		x := randomBlock(r, n)
		switch iter % 5 {
		case 0:
			nearFirstTies(r, x, nmax)
		case 1:
			if iter%50 == 1 {
				for i := range x {
					x[i] *= 1e-14
				}
			}
		}
		diff := comparePortable(n, func(L []int8) []float32 { return []float32{search.MakeQ3Quants(nmax, x, L, true)} })
		if diff != "" {
			t.Fatalf("iter %d (n %d, nmax %d) x %v: %s", iter, n, nmax, x, diff)
		}
	}
}

// TestQkx3Trials16AVX512 holds the sixteen AVX-512 trials of
// MakeQkx3Quants to two calls of the eight AVX2 ones, every lane of every
// output and the mask bit for bit, on random blocks (values near the first
// trial's rounding ties in half of them), weights, mins and numerators,
// with a special value now and then.
func TestQkx3Trials16AVX512(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(19, 20))
	special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), float32(math.Copysign(0, -1)), 3e38}
	f32 := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	f64 := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for iter := 0; iter < 20000; iter++ {
		n := []int{16, 32, 1 + r.IntN(64)}[r.IntN(3)]
		nmax := []int{3, 15, 31, 1 + r.IntN(31)}[r.IntN(4)]
		x, w := randomBlock(r, n), randomWeights(r, n)
		lo, hi := min(slices.Min(x), 0), slices.Max(x)
		if iter%2 == 0 && hi > lo {
			nearTies(r, x, float32(nmax)/(hi-lo), nmax)
			lo, hi = min(slices.Min(x), 0), slices.Max(x)
		}
		if iter%50 == 0 {
			x[r.IntN(n)] = special[r.IntN(len(special))]
			w[r.IntN(n)] = special[r.IntN(len(special))]
		}
		m := lo
		if r.IntN(2) == 0 {
			m = float32(float64(lo) * 2 * r.Float64())
		}
		var xd [64]float64
		wd := make([]float64, n)
		var sumW, sumX, sumX2 float64
		for i, v := range x {
			xd[i], wd[i] = float64(v), float64(w[i])
			sumW += wd[i]
			sumX += wd[i] * xd[i]
			sumX2 += wd[i] * xd[i] * xd[i]
		}
		var nums [16]float32
		for k := range nums {
			nums[k] = max(0, float32(nmax)+float32(2*r.Float64()-1))
		}
		den := hi - m
		if r.IntN(8) == 0 {
			den = special[r.IntN(len(special))]
		}
		bestMAD := r.ExpFloat64()
		var got, lo8, hi8 qkx3Lanes
		gotMask := qkx3Trials16AVX512(&nums[0], den, &x[0], m, &wd[0], &xd, n, float32(nmax), sumW, sumX, sumX2, bestMAD, &got)
		wantMask := qkx3Trials8AVX2(&nums[0], den, &x[0], m, &wd[0], &xd, n, float32(nmax), sumW, sumX, sumX2, bestMAD, &lo8)
		wantMask |= qkx3Trials8AVX2(&nums[8], den, &x[0], m, &wd[0], &xd, n, float32(nmax), sumW, sumX, sumX2, bestMAD, &hi8) << 8
		want := lo8
		copy(want.iscale[8:], hi8.iscale[:8])
		copy(want.D[8:], hi8.D[:8])
		copy(want.scale[8:], hi8.scale[:8])
		copy(want.min[8:], hi8.min[:8])
		copy(want.mad[8:], hi8.mad[:8])
		same := slices.EqualFunc(got.iscale[:], want.iscale[:], f32) &&
			slices.EqualFunc(got.D[:], want.D[:], f64) && slices.EqualFunc(got.scale[:], want.scale[:], f64) &&
			slices.EqualFunc(got.min[:], want.min[:], f64) && slices.EqualFunc(got.mad[:], want.mad[:], f64) &&
			slices.EqualFunc(got.xm[:n], want.xm[:n], f64)
		if gotMask != wantMask || !same {
			t.Fatalf("iter %d (n %d, nmax %d): mask %016b, lanes %+v; AVX2 %016b, %+v", iter, n, nmax, gotMask, got, wantMask, want)
		}
	}
}

// TestQxTrialSums512 holds the AVX-512 trial sums of MakeQxQuants to the
// AVX2 ones (which TestQxTrialSumsAVX2 holds to the portable sums): scales,
// sums and mask bit for bit, on random blocks, weights and numerators
// (exact powers of two among them), values near ties in half of them.
func TestQxTrialSums512(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(21, 22))
	f32 := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for iter := 0; iter < 5000; iter++ {
		n := 1 + r.IntN(64)
		nmax := 1 + r.IntN(32)
		x, w := randomBlock(r, n), randomWeights(r, n)
		var nums [qxLanes]float32
		max := float32(1)
		if iter%2 == 1 {
			max = float32(r.NormFloat64())
		}
		for k := range nums {
			nums[k] = float32(r.NormFloat64() * float64(nmax))
			if k%3 == 0 {
				nums[k] = float32(math.Ldexp(1-2*float64(r.IntN(2)), r.IntN(10)))
			}
		}
		if iter%2 == 0 {
			nearTies(r, x, nums[1], nmax)
		}
		if iter%50 == 0 {
			special := []float32{float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))}
			x[r.IntN(n)] = special[r.IntN(len(special))]
		}
		wx := make([]float32, n)
		for i, v := range x {
			wx[i] = float32(w[i] * v)
		}
		best := float32(r.ExpFloat64())
		var s1, lx1, l21, s2, lx2, l22 [qxLanes]float32
		want := qxTrialSumsAVX2(&nums, max, &x[0], &w[0], &wx[0], n, float32(-nmax), float32(nmax-1), best, &s1, &lx1, &l21)
		got := qxTrialSums512(&nums, max, &x[0], &w[0], &wx[0], n, float32(-nmax), float32(nmax-1), best, &s2, &lx2, &l22)
		if got != want || !slices.EqualFunc(s1[:], s2[:], f32) || !slices.EqualFunc(lx1[:], lx2[:], f32) || !slices.EqualFunc(l21[:], l22[:], f32) {
			t.Fatalf("iter %d (n %d, nmax %d): mask %048b, sums %v %v; AVX2 %048b, %v %v", iter, n, nmax, got, lx2, l22, want, lx1, l21)
		}
	}
}
