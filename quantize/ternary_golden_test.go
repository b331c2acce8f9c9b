package quantize_test

import (
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
)

// ternaryTypes are the types of quantize/ternary with the share of identical
// rows each reaches against ../shared/golden/kernels (see its README.md), per
// imatrix variant (the reference ignores the imatrix for these types).
var ternaryTypes = map[string]struct{ plain, imat float64 }{
	"iq1_bn":    {1, 1},
	"iq2_bn":    {1, 1},
	"iq2_bn_r4": {1, 1},
}

func TestTernaryGolden(t *testing.T) {
	runRowScaledGolden(t, ternaryTypes)
}

// TestIQ2BNR4IsRepack checks that the reference's iq2_bn_r4 output is its
// iq2_bn output with the rows interleaved, so Deinterleave undoes it exactly.
func TestIQ2BNR4IsRepack(t *testing.T) {
	for _, variant := range []string{"plain", "imat"} {
		r4 := golden.ReadFile(t, "kernels", "iq2_bn_r4."+variant+".bin")
		base := golden.ReadFile(t, "kernels", "iq2_bn."+variant+".bin")
		got := make([]byte, len(base))
		if err := formats.Deinterleave(formats.IQ2_BN_R4, 1024, got, r4); err != nil {
			t.Fatal(err)
		}
		if share, diff := golden.BlockShare(got, base, 0); share != 1 {
			t.Errorf("%s: deinterleaved iq2_bn_r4 differs from iq2_bn: %s", variant, diff)
		}
		back := make([]byte, len(r4))
		if err := formats.Interleave(formats.IQ2_BN_R4, 1024, back, base); err != nil {
			t.Fatal(err)
		}
		if share, diff := golden.BlockShare(back, r4, 0); share != 1 {
			t.Errorf("%s: interleaved iq2_bn differs from iq2_bn_r4: %s", variant, diff)
		}
	}
}

// runRowScaledGolden runs the golden kernel cases of the types in want:
// QuantizeRows over the whole input must reach the share of identical rows
// given (compared row group by row group: these types carry a row header),
// and where the reference dequantized its output, DequantizeRows of the
// reference bytes must reproduce that bit for bit.
func runRowScaledGolden(t *testing.T, want map[string]struct{ plain, imat float64 }) {
	input, imatrix := golden.KernelInput(t)
	seen := map[string]bool{}
	for _, c := range golden.Kernels(t) {
		shares, ok := want[c.Type]
		if !ok {
			continue
		}
		seen[c.Type] = true
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
			rs, err := typ.RowSize(int64(c.Cols))
			if err != nil {
				t.Fatal(err)
			}
			got, err := quantize.QuantizeRows(typ, c.Rows, c.Cols, input, w)
			if err != nil {
				t.Fatal(err)
			}
			share, diff := golden.BlockShare(got, ref, int(rs)*typ.Interleave())
			t.Logf("%s: %.2f%% identical rows", c.Name(), 100*share)
			if share < wantShare {
				t.Errorf("%s: %.4f identical rows, want %.4f; %s", c.Name(), share, wantShare, diff)
			}
			if c.Dequant == "" {
				return
			}
			deq := make([]float32, c.Rows*c.Cols)
			if err := formats.DequantizeRows(typ, c.Cols, ref, deq); err != nil {
				t.Fatal(err)
			}
			wantDeq := golden.F32(golden.ReadFile(t, "kernels", c.Dequant))
			for i := range deq {
				if math.Float32bits(deq[i]) != math.Float32bits(wantDeq[i]) {
					t.Fatalf("dequantized weight %d (row %d): %v, want %v", i, i/c.Cols, deq[i], wantDeq[i])
				}
			}
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no golden output for %s", name)
		}
	}
}
