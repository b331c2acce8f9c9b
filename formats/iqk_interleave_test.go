package formats_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
)

// TestIQKInterleaveGolden checks the _r4 repacks against the reference: its
// _r4 output is the base type's quantization of the same rows, repacked, so
// interleaving golden base bytes must give the golden _r4 bytes and
// de-interleaving must give back the base bytes.
func TestIQKInterleaveGolden(t *testing.T) {
	r4 := []formats.Type{formats.IQ2_K_R4, formats.IQ3_K_R4, formats.IQ4_K_R4, formats.IQ5_K_R4, formats.IQ4_KS_R4, formats.IQ5_KS_R4}
	cases := map[string]golden.KernelCase{}
	for _, c := range golden.Kernels(t) {
		cases[c.Name()] = c
	}
	for _, typ := range r4 {
		for _, variant := range []string{"plain", "imat"} {
			t.Run(typ.String()+"/"+variant, func(t *testing.T) {
				rc, ok1 := cases[typ.String()+"/"+variant]
				bc, ok2 := cases[typ.Base().String()+"/"+variant]
				if !ok1 || !ok2 {
					t.Fatalf("golden manifest lacks %s or its base for %s", typ, variant)
				}
				want := golden.ReadFile(t, "kernels", rc.File)
				base := golden.ReadFile(t, "kernels", bc.File)
				got := make([]byte, len(want))
				if err := formats.Interleave(typ, rc.Cols, got, base); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("interleave: %s", iqkFirstDiff(got, want))
				}
				back := make([]byte, len(base))
				if err := formats.Deinterleave(typ, rc.Cols, back, want); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(back, base) {
					t.Errorf("deinterleave: %s", iqkFirstDiff(back, base))
				}
				if !formats.CanDequantize(typ) {
					t.Errorf("%s cannot be dequantized", typ)
				}
			})
		}
	}
}

// TestIQKInterleaveRoundTrip checks that the repacks lose no bits on random
// rows of several lengths (every bit pattern, not just what a quantizer emits).
func TestIQKInterleaveRoundTrip(t *testing.T) {
	r4 := []formats.Type{formats.IQ2_K_R4, formats.IQ3_K_R4, formats.IQ4_K_R4, formats.IQ5_K_R4, formats.IQ4_KS_R4, formats.IQ5_KS_R4}
	for _, typ := range r4 {
		for _, ne0 := range []int{256, 768} {
			t.Run(fmt.Sprintf("%s/%d", typ, ne0), func(t *testing.T) {
				rs, _ := typ.Base().RowSize(int64(ne0))
				base := make([]byte, 8*int(rs))
				seed := uint32(ne0)
				for i := range base {
					seed = seed*1664525 + 1013904223
					base[i] = byte(seed >> 24)
				}
				group := make([]byte, len(base))
				if err := formats.Interleave(typ, ne0, group, base); err != nil {
					t.Fatal(err)
				}
				back := make([]byte, len(base))
				if err := formats.Deinterleave(typ, ne0, back, group); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(back, base) {
					t.Errorf("round trip: %s", iqkFirstDiff(back, base))
				}
			})
		}
	}
}

func iqkFirstDiff(got, want []byte) string {
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d of %d", i, len(want))
		}
	}
	return fmt.Sprintf("length %d, want %d", len(got), len(want))
}
