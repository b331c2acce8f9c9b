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

// guardWeightsSums is GuardWeights without its shortcut: the three sums of
// every block, as the reference computes them.
func guardWeightsSums(imatrix, x []float32, block int, fused bool) []float32 {
	const eps = float32(1e-9)
	w := append([]float32(nil), imatrix...)
	limit := float32(block) * (eps * eps)
	for ib := 0; ib+block <= len(x); ib += block {
		var sumw2, sumx2, sumwx float32
		for j := ib; j < ib+block; j++ {
			a := float32(math.Abs(float64(x[j])))
			if fused {
				sumw2, sumx2, sumwx = FMA32(w[j], w[j], sumw2), FMA32(x[j], x[j], sumx2), FMA32(w[j], a, sumwx)
			} else {
				sumw2, sumx2, sumwx = sumw2+float32(w[j]*w[j]), sumx2+float32(x[j]*x[j]), sumwx+float32(w[j]*a)
			}
		}
		if !(sumw2 > limit && sumx2 > limit && sumwx > limit) {
			for j := ib; j < ib+block; j++ {
				w[j] = eps
			}
		}
	}
	return w
}

// The shortcut keeps exactly the blocks the sums keep, at every scale and
// in particular around the threshold (values near 1e-9), with zeros mixed
// in so that the first index often does not settle a block.
func TestGuardWeightsShortcut(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	const n, block = 4096, 32
	x, im, dst := make([]float32, n), make([]float32, n), make([]float32, n)
	scales := []float64{0, 1e-12, 3e-10, 7e-10, 1e-9, 1.4e-9, 2e-9, 5e-9, 1e-6, 0.02, 1}
	kept, guarded := 0, 0
	for trial := 0; trial < 400; trial++ {
		for ib := 0; ib < n; ib += block {
			sx, sw := scales[r.IntN(len(scales))], scales[r.IntN(len(scales))]
			zeros := r.Float64()
			for j := ib; j < ib+block; j++ {
				x[j] = float32(sx * r.NormFloat64())
				im[j] = float32(sw * r.ExpFloat64())
				if r.Float64() < zeros {
					x[j] = 0
				}
				if r.Float64() < zeros/2 {
					im[j] = 0
				}
			}
		}
		for _, fused := range []bool{false, true} {
			want := guardWeightsSums(im, x, block, fused)
			got := GuardWeights(dst, im, x, block, fused)
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("trial %d fused %v: weight %d is %g, the sums give %g", trial, fused, j, got[j], want[j])
				}
			}
			for ib := 0; ib < n; ib += block {
				if want[ib] == 1e-9 {
					guarded++
				} else {
					kept++
				}
			}
		}
	}
	// Both outcomes must be well represented for the test to mean anything.
	if kept < 1000 || guarded < 1000 {
		t.Fatalf("blocks kept %d, guarded %d: the data does not exercise both", kept, guarded)
	}
	if GuardWeights(dst, nil, x, block, true) != nil {
		t.Fatal("no importance matrix gives weights")
	}
}
