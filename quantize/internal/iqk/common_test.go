package iqk

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// fmaExact rounds a*b+c once with big.Float arithmetic.
func fmaExact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(300).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(300).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(300).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

func TestFMA(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(a, b, c float32) {
		t.Helper()
		got, want := kernel.FMA32(a, b, c), fmaExact(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("kernel.FMA32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
		if k := kernel.FMA32(a, b, c); k != got && !(k == 0 && got == 0) {
			t.Fatalf("kernel.FMA32(%g, %g, %g) = %g, kernel.FMA32 gives %g", a, b, c, got, k)
		}
	}
	for i := 0; i < 100000; i++ {
		a := float32(r.NormFloat64())
		b := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
		c := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(80)-40)))
		check(a, b, c)
		// Small integer factors, as with grid values: frequent exact ties.
		check(a, float32(r.IntN(255)-127), c)
	}
	// a*b = 2^-24 - 2^-60: the float64 sum rounds onto the float32 tie
	// 1+3*2^-24 though the true value is below it.
	a, b := float32(1+0x1p-18), float32(0x1p-24*(1-0x1p-18))
	for _, c := range []float32{1 + 0x1p-23, 1, 1 + 0x1p-22, 3 + 0x1p-22} {
		check(a, b, c)
		check(-a, b, -c)
		check(a, -b, c)
		check(-a, -b, -c)
	}
	// Sums that land on a float32 tie only after float64 rounding.
	for i := 0; i < 20000; i++ {
		a := 1 + float32(r.IntN(1<<12))/(1<<12)
		b := 1 + float32(r.IntN(1<<12))/(1<<12)
		p := float64(a) * float64(b)
		c := float32(float64(float32(p)) - p + float64(r.IntN(3)-1)*math.Pow(2, -50))
		check(a, b, c)
		check(a, b, -c)
		check(-a, b, c)
		check(a, b, c*(1+0x1p-23))
	}
}
