package ternary

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/formats"
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
	values := []float32{0, negZero, 1, -1, 0.5, -0.5, 0.49999997, -0.49999997, 1e-45, -1e-45, 3.4e38, -3.4e38}
	threshes := []float32{0, 0.5, 1e-45, 1}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 1000; i++ {
		values = append(values, float32(rng.NormFloat64()))
	}
	for _, th := range threshes {
		for _, v := range values {
			if got, want := trit(v, math.Float32bits(th)), tritReference(v, th); got != want {
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
	f := Kernels()[formats.IQ2_BN]
	rs, _ := formats.IQ2_BN.RowSize(cols)
	dst := make([]byte, rows*int(rs))
	b.SetBytes(rows * cols * 2) // bf16 input bytes, as the reference's figures
	for i := 0; i < b.N; i++ {
		if err := f(dst, src, rows, cols, nil); err != nil {
			b.Fatal(err)
		}
	}
}
