package quantize_test

import (
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
)

// iquantTypes are the types of quantize/iquant with the share of identical
// blocks each reaches against ../shared/golden/kernels (see its README.md),
// per imatrix variant. A block of an interleaved type is one row group's
// block. -1 marks a variant the golden data has no output for (the type needs
// an importance matrix).
var iquantTypes = map[string]struct{ plain, imat float64 }{
	"iq4_nl":     {1, 1},
	"iq4_xs":     {1, 1},
	"iq4_nl_r4":  {1, 1},
	"iq4_xs_r8":  {1, 1},
	"iq3_s":      {1, 1},
	"iq3_xxs":    {1, 1},
	"iq3_s_r4":   {1, 1},
	"iq3_xxs_r4": {1, 1},
	"iq2_s":      {1, 1},
	"iq2_xs":     {-1, 1},
	"iq2_xxs":    {-1, 1},
	"iq2_s_r4":   {1, 1},
	"iq2_xs_r4":  {1, 1},
	"iq2_xxs_r4": {1, 1},
	"iq1_s":      {-1, 1},
	"iq1_s_r4":   {1, 1},
	// One of the four row groups of iq1_m_r4 without an imatrix differs
	// (see the notes on iq1mR4Kernel in quantize/iquant/iq1.go).
	"iq1_m":    {1, 1},
	"iq1_m_r4": {0.75, 1},
}

// TestIQuantGolden quantizes the whole golden input in one call per type and
// imatrix variant and compares with the reference byte for byte; where the
// reference dequantized its output, our bytes must dequantize to the same
// floats.
func TestIQuantGolden(t *testing.T) {
	input, imatrix := golden.KernelInput(t)
	for _, c := range golden.Kernels(t) {
		shares, ok := iquantTypes[c.Type]
		if !ok {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
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
			blockBytes := typ.TypeSize() * typ.Interleave()
			if typ.RowMeta() != 0 {
				blockBytes = len(ref) / (c.Rows / typ.Interleave()) // one row group
			}
			share, diff := golden.BlockShare(got, ref, blockBytes)
			t.Logf("%s: %.2f%% identical blocks", c.Name(), 100*share)
			if share < wantShare {
				t.Errorf("%s: %.4f identical blocks, want %.4f; %s", c.Name(), share, wantShare, diff)
			}
			if c.Dequant == "" || share != 1 {
				return
			}
			deq := make([]float32, c.Rows*c.Cols)
			if err := formats.DequantizeRows(typ, c.Cols, got, deq); err != nil {
				t.Fatal(err)
			}
			wantDeq := golden.F32(golden.ReadFile(t, "kernels", c.Dequant))
			for i := range deq {
				if math.Float32bits(deq[i]) != math.Float32bits(wantDeq[i]) {
					t.Fatalf("%s: identical bytes but weight %d dequantizes to %v, want %v", c.Name(), i, deq[i], wantDeq[i])
				}
			}
		})
	}
}

// TestIQuantNeedsImatrix checks that the types the reference refuses without
// an importance matrix are refused, and that their interleaved forms are not.
func TestIQuantNeedsImatrix(t *testing.T) {
	x := make([]float32, 4*256)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	for _, typ := range []formats.Type{formats.IQ2_XXS, formats.IQ2_XS, formats.IQ1_S} {
		if !quantize.Supported(typ) {
			continue
		}
		if _, err := quantize.QuantizeRows(typ, 4, 256, x, nil); err == nil {
			t.Errorf("%s without an importance matrix: no error", typ)
		}
	}
	for _, typ := range []formats.Type{formats.IQ2_XXS_R4, formats.IQ2_XS_R4, formats.IQ1_S_R4} {
		if !quantize.Supported(typ) {
			continue
		}
		if _, err := quantize.QuantizeRows(typ, 4, 256, x, nil); err != nil {
			t.Errorf("%s without an importance matrix: %v", typ, err)
		}
	}
}
