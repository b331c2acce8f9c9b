package legacy

import (
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

func TestSymmetricQ40(t *testing.T) {
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(math.Sin(float64(i))) * 0.7
	}
	x[5] = -1.4 // the largest magnitude, negative
	dst := make([]byte, 2*blockQ4_0)
	if err := quantizeQ4_0(kernel.Options{SymmetricQ40: true})(dst, x, 1, 64, make([]float32, 64)); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 64)
	if err := formats.DequantizeRows(formats.Q4_0, 64, dst, out); err != nil {
		t.Fatal(err)
	}
	d := formats.FP16ToFP32(uint16(dst[0]) | uint16(dst[1])<<8)
	if math.Abs(float64(d)-1.4/7) > 1e-3 {
		t.Errorf("scale %v, want 1.4/7", d)
	}
	for i := range x {
		if math.Abs(float64(out[i]-x[i])) > 0.55*float64(d) {
			t.Fatalf("weight %d: %v -> %v (scale %v)", i, x[i], out[i], d)
		}
	}
	// Symmetric: the code 8 +/- 7 covers the extremes exactly, nothing uses 0.
	for j := 0; j < 16; j++ {
		if dst[2+j]&15 == 0 || dst[2+j]>>4 == 0 {
			t.Fatalf("code 0 used in a symmetric block")
		}
	}
}
