package quantize_test

import (
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
)

// kquantTypes are the types of quantize/kquant with the share of identical
// blocks each reaches against ../shared/golden/kernels (see its README.md),
// per imatrix variant. A block of an _r4 type is four interleaved blocks.
var kquantTypes = map[string]struct{ plain, imat float64 }{
	"q2_K":    {1, 1},
	"q3_K":    {1, 1},
	"q4_K":    {1, 1},
	"q5_K":    {1, 1},
	"q6_K":    {1, 1},
	"q2_k_r4": {1, 1},
	"q3_k_r4": {1, 1},
	"q4_k_r4": {1, 1},
	"q5_k_r4": {1, 1},
	"q6_k_r4": {1, 1},
}

// TestKQuantGolden quantizes the whole golden input in one call per type and
// imatrix variant and compares with the reference byte for byte; where the
// reference dequantized its output, our bytes must dequantize to the same
// floats.
func TestKQuantGolden(t *testing.T) {
	input, imatrix := golden.KernelInput(t)
	seen := map[string]bool{}
	for _, c := range golden.Kernels(t) {
		shares, ok := kquantTypes[c.Type]
		if !ok {
			continue
		}
		seen[c.Type] = true
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			if typ.IsInterleaved() && !formats.CanInterleave(typ) {
				t.Skipf("no interleaver for %s yet", typ)
			}
			var w []float32
			wantShare := shares.plain
			if c.Imatrix {
				w, wantShare = imatrix, shares.imat
			}
			ref := golden.ReadFile(t, "kernels", c.File)
			got, err := quantize.QuantizeRows(typ, c.Rows, c.Cols, input, w)
			if err != nil {
				t.Fatal(err)
			}
			share, diff := golden.BlockShare(got, ref, typ.TypeSize()*typ.Interleave())
			t.Logf("%s: %.2f%% identical blocks", c.Name(), 100*share)
			if share < wantShare {
				t.Errorf("%s: %.4f identical blocks, want %.4f; %s", c.Name(), share, wantShare, diff)
			}
			if c.Dequant == "" {
				return
			}
			if !formats.CanDequantize(typ) {
				t.Logf("no dequantizer for %s yet: round trip not checked", typ)
				return
			}
			deq := make([]float32, c.Rows*c.Cols)
			if err := formats.DequantizeRows(typ, c.Cols, got, deq); err != nil {
				t.Fatal(err)
			}
			wantDeq := golden.F32(golden.ReadFile(t, "kernels", c.Dequant))
			same := 0
			for i := range deq {
				if math.Float32bits(deq[i]) == math.Float32bits(wantDeq[i]) {
					same++
				}
			}
			if share == 1 && same != len(deq) {
				t.Errorf("%s: identical bytes but %d of %d dequantized weights differ", c.Name(), len(deq)-same, len(deq))
			}
		})
	}
	for name := range kquantTypes {
		if !seen[name] {
			t.Errorf("no golden output for %s", name)
		}
	}
}
