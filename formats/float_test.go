package formats

import (
	"math"
	"testing"
)

func TestFP16RoundTripAllHalves(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := FP16ToFP32(h)
		if math.IsNaN(float64(f)) {
			if back := FP32ToFP16(f); back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN %#04x -> %#04x", h, back)
			}
			continue
		}
		if back := FP32ToFP16(f); back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
}

func TestFP16Rounding(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00}, {1e10, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {5.960464477539063e-08, 0x0001}, {2.98023223876953125e-08, 0x0000},
		{2.98023259e-08, 0x0001}, {1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}, {6.1035156e-05, 0x0400},
	} {
		if got := FP32ToFP16(tc.in); got != tc.want {
			t.Errorf("FP32ToFP16(%v) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}

func TestBF16(t *testing.T) {
	for _, tc := range []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, {0x3f808000, 0x3f80}, {0x3f818000, 0x3f82}, {0x3f808001, 0x3f81},
		{0x7f7fffff, 0x7f80}, {0x7fc00000, 0x7fc0}, {0x7f800001, 0x7fc0}, {0xff800000, 0xff80},
	} {
		if got := FP32ToBF16(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("FP32ToBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	if BF16ToFP32(0x3f80) != 1 {
		t.Error("BF16ToFP32(0x3f80) != 1")
	}
}
