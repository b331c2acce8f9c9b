package formats_test

import (
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
)

// ktBNTypes are the trellis and ternary types whose golden outputs come with
// a reference dequantization (kernels/<type>.<variant>.deq.f32).
var ktBNTypes = map[string]bool{
	"iq1_kt": true, "iq2_kt": true, "iq3_kt": true, "iq4_kt": true,
	"iq1_bn": true, "iq2_bn": true,
}

// TestKTAndBNDequantizeGolden dequantizes the reference's quantized bytes
// and compares with the reference's own dequantization, bit for bit. (For
// iq1_bn and iq2_bn that includes the reference decoding the row header as
// if it were block data: see dequant_bn.go.)
func TestKTAndBNDequantizeGolden(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range golden.Kernels(t) {
		if !ktBNTypes[c.Type] || c.Dequant == "" {
			continue
		}
		seen[c.Type] = true
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			src := golden.ReadFile(t, "kernels", c.File)
			want := golden.F32(golden.ReadFile(t, "kernels", c.Dequant))
			got := make([]float32, c.Rows*c.Cols)
			if err := formats.DequantizeRows(typ, c.Cols, src, got); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("row %d column %d: got %v (%#08x), want %v (%#08x)", i/c.Cols, i%c.Cols,
						got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		})
	}
	for name := range ktBNTypes {
		if !seen[name] {
			t.Errorf("no golden dequantization for %s", name)
		}
	}
}
