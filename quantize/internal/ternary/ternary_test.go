package ternary

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// tritReference is the reference's rule, spelled out.
func tritReference(v, thresh float32) int {
	switch {
	case float32(math.Abs(float64(v))) < thresh:
		return 1
	case v < 0:
		return 0
	}
	return 2
}

func TestTritMatchesReferenceRule(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negNaN := math.Float32frombits(math.Float32bits(nan) | 1<<31)
	values := []float32{0, negZero, 1, -1, 0.5, -0.5, 0.49999997, -0.49999997, 1e-45, -1e-45, 3.4e38, -3.4e38, nan, negNaN, inf, -inf}
	threshes := []float32{0, 0.5, 1e-45, 1, inf}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 1000; i++ {
		values = append(values, float32(rng.NormFloat64()))
	}
	for _, th := range threshes {
		for _, v := range values {
			if got, want := int(tritBits(math.Float32bits(v), math.Float32bits(th))), tritReference(v, th); got != want {
				t.Errorf("trit(%v, thresh %v) = %d, want %d", v, th, got, want)
			}
		}
	}
}

func BenchmarkIQ2BN(b *testing.B) {
	const rows, cols = 64, 4096
	rng := rand.New(rand.NewPCG(7, 8))
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 0.02)
	}
	f := Kernels(kernel.Options{})[formats.IQ2_BN]
	rs, _ := formats.IQ2_BN.RowSize(cols)
	dst := make([]byte, rows*int(rs))
	b.SetBytes(rows * cols * 2) // bf16 input bytes, as the reference's figures
	for i := 0; i < b.N; i++ {
		if err := f(dst, src, rows, cols, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRowAbsMax checks the branch-free maximum against the reference's loop
// of std::max(max, fabsf(x)), which keeps the maximum when x is a NaN.
func TestRowAbsMax(t *testing.T) {
	nan := float32(math.NaN())
	negNaN := math.Float32frombits(math.Float32bits(nan) | 1<<31)
	inf := float32(math.Inf(1))
	rng := rand.New(rand.NewPCG(3, 3))
	for n := 0; n < 40; n++ {
		for trial := 0; trial < 50; trial++ {
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
				switch rng.IntN(12) {
				case 0:
					src[i] = nan
				case 1:
					src[i] = negNaN
				case 2:
					if trial%5 == 0 {
						src[i] = -inf
					}
				}
			}
			var want float32
			for _, v := range src {
				if a := float32(math.Abs(float64(v))); want < a {
					want = a
				}
			}
			if got := rowAbsMax(src); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("rowAbsMax(%v) = %v, want %v", src, got, want)
			}
		}
	}
}

// TestAssembly checks the AVX2 loops against the portable ones on random
// rows with NaNs, infinities, zeros of both signs and values equal to the
// threshold.
func TestAssembly(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	nan := float32(math.NaN())
	specials := []float32{nan, math.Float32frombits(math.Float32bits(nan) | 1<<31), float32(math.Inf(1)),
		float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 0.5, -0.5}
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 500; trial++ {
		n := 32 * (1 + rng.IntN(8))
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
			if rng.IntN(10) == 0 {
				src[i] = specials[rng.IntN(len(specials))]
				if trial%3 != 0 && math.IsInf(float64(src[i]), 0) {
					src[i] = 1
				}
			}
		}
		m := rowAbsMax(src)
		if want := rowAbsMaxGo(src); math.Float32bits(m) != math.Float32bits(want) {
			t.Fatalf("trial %d: assembly maximum %v, portable %v", trial, m, want)
		}
		for _, th := range []float32{0.5 * m, 0.5, 0, float32(math.Inf(1))} {
			got, want := make([]byte, n), make([]byte, n)
			rowTrits(got, src, th)
			useAVX2 = false
			rowTrits(want, src, th)
			useAVX2 = true
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d thresh %v: assembly trits %v, portable %v", trial, th, got, want)
			}
		}
	}
}
