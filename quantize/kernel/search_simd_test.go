package kernel

import (
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

func TestQxTrialSumsAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 3000; iter++ {
		n := 1 + r.IntN(64)
		nmax := 1 + r.IntN(32)
		x, w := randomBlock(r, n), randomWeights(r, n)
		var scales, sumlx, suml2 [qxLanes]float32
		for k := range scales {
			scales[k] = float32(r.NormFloat64() * float64(nmax))
			if k%3 == 0 { // powers of two: exact ties on the grid shapes
				scales[k] = float32(math.Ldexp(1-2*float64(r.IntN(2)), r.IntN(10)))
			}
		}
		if iter%2 == 0 {
			nearTies(r, x, scales[1], nmax)
		}
		wx := make([]float32, n)
		xd := make([]float64, n)
		for i, v := range x {
			wx[i] = float32(w[i] * v)
			xd[i] = float64(v)
		}
		qxTrialSumsAVX2(&scales, &x[0], &w[0], &wx[0], n, float32(-nmax), float32(nmax-1), &sumlx, &suml2)
		q := make([]uint8, n)
		for k, s := range scales {
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
		got, want := make([]int8, n), make([]int8, n)
		d := MakeQxQuants(nmax, x, got, 1, w)
		var wantD float32
		withPortable(func() { wantD = MakeQxQuants(nmax, x, want, 1, w) })
		if math.Float32bits(d) != math.Float32bits(wantD) || !slices.Equal(got, want) {
			t.Fatalf("iter %d (n %d, nmax %d): %v %v; portable %v %v", iter, n, nmax, d, got, wantD, want)
		}
	}
}

func TestMakeQkx3QuantsSIMDAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for iter := 0; iter < 20000; iter++ {
		n := []int{16, 32, 8 * (1 + r.IntN(8))}[r.IntN(3)]
		nmax := []int{3, 15, 31, 1 + r.IntN(31)}[r.IntN(4)]
		x := randomBlock(r, n)
		var w []float32
		if r.IntN(4) > 0 {
			w = randomWeights(r, n)
		}
		got, want := make([]uint8, n), make([]uint8, n)
		laux := make([]uint8, n)
		d, m := MakeQkx3Quants(nmax, x, w, got, laux, -0.9, 0.05, 36, false)
		var wantD, wantM float32
		withPortable(func() { wantD, wantM = MakeQkx3Quants(nmax, x, w, want, laux, -0.9, 0.05, 36, false) })
		if math.Float32bits(d) != math.Float32bits(wantD) || math.Float32bits(m) != math.Float32bits(wantM) || !slices.Equal(got, want) {
			t.Fatalf("iter %d (n %d, nmax %d): %v %v %v; portable %v %v %v", iter, n, nmax, d, m, got, wantD, wantM, want)
		}
	}
}
