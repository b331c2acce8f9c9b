package kernel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestNearestInt(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want int
	}{{0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {3.49, 3}, {-7.51, -8}, {4194303, 4194303}} {
		if got := NearestInt(tc.in); got != tc.want {
			t.Errorf("NearestInt(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// fmaExact rounds a*b+c once using big.Float arithmetic.
func fmaExact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		t.Helper()
		if got, want := FMA32(a, b, c), fmaExact(a, b, c); got != want && !(got == 0 && want == 0) {
			t.Fatalf("FMA32(%v, %v, %v) = %v, want %v", a, b, c, got, want)
		}
	}
	for i := 0; i < 200000; i++ {
		a := float32(r.NormFloat64())
		b := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(20)-10)))
		c := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(60)-30)))
		check(a, b, c)
	}
	// Cases built to hit the double-rounding tie: a*b = 1 + 2^-24 + tiny.
	one := float32(1)
	check(1+1.0/(1<<12), 1+1.0/(1<<12), -1.0/(1<<11)) // exact 1 + 2^-24
	check(one+1.0/(1<<23), one+1.0/(1<<23), -1.0/(1<<22))
	for i := 0; i < 20000; i++ {
		a := 1 + float32(r.IntN(1<<12))/(1<<12)
		b := 1 + float32(r.IntN(1<<12))/(1<<12)
		p := float64(a) * float64(b)
		c := float32(float64(float32(p)) - p + float64(r.IntN(3)-1)*math.Pow(2, -50))
		check(a, b, c)
		check(a, b, -c)
	}
}

func BenchmarkFMA32(b *testing.B) {
	x, y, z := float32(1.1), float32(0.3), float32(0.7)
	for i := 0; i < b.N; i++ {
		z = FMA32(x, y, z) * 0.5
	}
	sink = z
}

var sink float32
