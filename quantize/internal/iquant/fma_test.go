package iquant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// TestFMABits checks that fmaBits flags every sum whose plain float32
// rounding could differ from kernel.FMA32, on random operands and on sums
// built to land on float32 ties, where double rounding bites.
func TestFMABits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		t.Helper()
		want := kernel.FMA32(a, b, c)
		if got := kernel.FMA32(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("kernel.FMA32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
		if got := fmaTieFree(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fmaTieFree(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
		v, tie := fmaBits(a, b, c)
		if got := float32(v); !tie && math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fmaBits(%g, %g, %g) = %g without a tie, want %g", a, b, c, got, want)
		}
	}
	for range 200000 {
		a := float32(r.NormFloat64() * math.Exp(4*r.NormFloat64()))
		b := float32(r.NormFloat64())
		c := float32(r.NormFloat64() * math.Exp(4*r.NormFloat64()))
		check(a, b, c)
		check(a, b, -c)
	}
	// Grid searches: a scale times a small odd level minus a value of the
	// same magnitude, where the float64 sum is often exact and on a tie.
	for range 200000 {
		scale := float32(r.NormFloat64() * math.Exp(2*r.NormFloat64()))
		q := float32(2*r.IntN(8) + 1)
		x := float32(float64(scale) * (16*r.Float64() - 8))
		check(scale, q, -x)
	}
	// Ties: a*b = 2^-24*(1-2^-2j) sits just below half an ulp of c in
	// [1, 2), by less than float64 resolves, so the float64 sum lands on a
	// float32 tie that the exact sum does not reach.
	ties := 0
	for range 20000 {
		c := float32(1 + math.Ldexp(float64(r.IntN(1<<23)), -23))
		j := 14 + r.IntN(8)
		scale := math.Ldexp(1, r.IntN(40)-20)
		a := float32(scale * math.Ldexp(1+math.Ldexp(1, -j), -24))
		b := float32(1 - math.Ldexp(1, -j))
		cs := float32(scale) * c
		for _, s := range []float32{1, -1} {
			check(s*a, b, cs)
			check(s*a, -b, cs)
			check(s*a, b, -cs)
			if _, tie := fmaBits(s*a, b, cs); tie {
				ties++
			}
		}
	}
	if ties == 0 {
		t.Fatal("no tie cases generated")
	}
}
