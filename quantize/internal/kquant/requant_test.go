package kquant

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRequantAgrees checks the assembly requantization against the portable
// loop, bit for bit, on the parameters of every K-quant and on values whose
// quotients are rounding ties, far out of range, zero or not finite.
func TestRequantAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	type bounds struct{ lo, hi, off int }
	cases := []bounds{{0, 3, 0}, {-4, 3, 4}, {0, 15, 0}, {0, 31, 0}, {-32, 31, 32}}
	r := rand.New(rand.NewPCG(21, 22))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38, -3e38, 1e-30}
	for iter := 0; iter < 20000; iter++ {
		c := cases[iter%len(cases)]
		n := []int{8, 16, 32, 256}[r.IntN(4)]
		d := float32(math.Ldexp(r.Float64()+0.5, -r.IntN(20)))
		if r.IntN(2) == 0 {
			d = -d
		}
		var dm float32
		if c.lo == 0 && r.IntN(2) == 0 {
			dm = float32(r.Float64()) * d * 2
		}
		x := make([]float32, n)
		for i := range x {
			switch r.IntN(8) {
			case 0: // a rounding tie of the quotient
				x[i] = (float32(r.IntN(2*c.hi+4)-c.hi-2)+0.5)*d - dm
			case 1:
				x[i] = specials[r.IntN(len(specials))]
			case 2: // far out of range
				x[i] = float32(r.NormFloat64()) * d * 1e7
			default:
				x[i] = float32(r.NormFloat64()) * d * float32(c.hi+1)
			}
		}
		if iter%100 == 0 {
			d = specials[r.IntN(len(specials))]
		}
		got, want := make([]uint8, n), make([]uint8, n)
		requant(got, x, dm, d, c.lo, c.hi, c.off)
		requantPortable(want, x, dm, d, c.lo, c.hi, c.off)
		if !slices.Equal(got, want) {
			t.Fatalf("iter %d (%+v, d %v, dm %v) x %v: %v; portable %v", iter, c, d, dm, x, got, want)
		}
	}
}

// TestTernaryMaxAgrees checks ternaryMax with the assembly against the
// portable loops on normal and ternary-like rows, with ties at ±max/2,
// signed zeros and NaN, and a TernaryCheck fed the same values in parts
// (of whole rows, as a caller splitting a call has them) against both.
func TestTernaryMaxAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(23, 24))
	for iter := 0; iter < 3000; iter++ {
		n := 8 * (1 + r.IntN(100))
		x := make([]float32, n)
		m := float32(math.Ldexp(1, -r.IntN(10)))
		for i := range x {
			switch {
			case iter%2 == 0: // ternary, with noise
				x[i] = m*float32(r.IntN(3)-1) + float32(0.01*r.NormFloat64())*m*float32(r.IntN(2))
			case r.IntN(20) == 0:
				x[i] = []float32{m / 2, -m / 2, float32(math.Copysign(0, -1)), 0}[r.IntN(4)]
			default:
				x[i] = float32(r.NormFloat64()) * m
			}
		}
		if iter%100 == 99 {
			x[r.IntN(n)] = float32(math.NaN())
		}
		gotMax, gotOK := ternaryMax(x)
		useAVX2 = false
		wantMax, wantOK := ternaryMax(x)
		useAVX2 = true
		if math.Float32bits(gotMax) != math.Float32bits(wantMax) || gotOK != wantOK {
			t.Fatalf("iter %d: %v %v; portable %v %v", iter, gotMax, gotOK, wantMax, wantOK)
		}
		var cuts []int
		for at := 0; at < n; at += 8 * (1 + r.IntN(8)) {
			cuts = append(cuts, at)
		}
		cuts = append(cuts, n)
		for _, simd := range []bool{true, false} {
			useAVX2 = simd
			var c TernaryCheck
			for i := 1; i < len(cuts); i++ {
				c.AddMax(x[cuts[i-1]:cuts[i]])
			}
			for i := 1; i < len(cuts); i++ {
				c.AddSums(x[cuts[i-1]:cuts[i]])
			}
			if math.Float32bits(c.Max()) != math.Float32bits(wantMax) || c.Ternary() != wantOK {
				t.Fatalf("iter %d, in %d parts (assembly %v): %v %v; whole %v %v", iter, len(cuts)-1, simd, c.Max(), c.Ternary(), wantMax, wantOK)
			}
		}
		useAVX2 = true
	}
}

// TestRoundShiftedAgrees holds roundShifted with the assembly to the
// portable loop, bit for bit, on q2_K's parameters: products that are
// rounding ties, near and beyond 2^22, zero, infinite or NaN, and shifts
// mm·lm (fused into x + m by both) now and then infinite or NaN.
func TestRoundShiftedAgrees(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(23, 24))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38, -3e38, 1e-30}
	for iter := 0; iter < 20000; iter++ {
		n := []int{8, 16, 32}[r.IntN(3)]
		hi := []int{3, 7, 15, 31}[r.IntN(4)]
		id := float32(math.Ldexp(r.Float64()+0.5, r.IntN(20)-10))
		lm := float32(r.IntN(16))
		mm := float32(r.Float64()) / id / 8
		m := mm * lm
		x := make([]float32, n)
		for i := range x {
			switch r.IntN(10) {
			case 0: // a rounding tie of the product
				x[i] = (float32(r.IntN(2*hi+4)-hi-2)+0.5)/id - m
			case 1:
				x[i] = specials[r.IntN(len(specials))]
			case 2: // the product near 2^22
				x[i] = float32(4194304+r.IntN(5)-2)/id - m
			default:
				x[i] = float32(r.NormFloat64()) * float32(hi+1) / id
			}
		}
		if iter%3 == 0 { // mostly in range
			for i := range x {
				x[i] = float32(r.Float64()*float64(hi+2)-1)/id - m
			}
		}
		if iter%100 == 0 {
			id = specials[r.IntN(len(specials))]
		}
		if iter%7 == 0 { // an infinite or NaN shift
			mm = specials[r.IntN(len(specials))]
		}
		got, want := make([]uint8, n), make([]uint8, n)
		roundShifted(got, x, mm, lm, id, hi)
		roundShiftedPortable(want, x, mm, lm, id, hi)
		if !slices.Equal(got, want) {
			t.Fatalf("iter %d (hi %d, mm %v, lm %v, id %v) x %v: %v; portable %v", iter, hi, mm, lm, id, x, got, want)
		}
	}
}
