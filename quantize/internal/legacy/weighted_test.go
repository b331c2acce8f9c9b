package legacy

import (
	"encoding/hex"
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// specialRow returns the special row of testrows named name.
func specialRow(t *testing.T, name string) []float32 {
	t.Helper()
	for _, r := range testrows.Specials(testrows.FixtureCols) {
		if r.Name == name {
			return r.X
		}
	}
	t.Fatalf("no special row %q", name)
	return nil
}

// Blocks where our bytes differed from the reference's, each for one cause
// (the reference's bytes, from /work/refbuild's refquant).
func TestWeightedBlocks(t *testing.T) {
	ims := testrows.Imatrices(testrows.FixtureCols)
	for _, tc := range []struct {
		name    string
		row     string
		imatrix int
		quant   func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error
		size    int
		block   int
		want    string
	}{
		// sigma2 is the in-order sum of rounded squares (GCC vectorizes
		// the reference's loop); summed with fused multiply-adds it is one
		// ulp larger here, and so are some weights.
		{"sigma2", "one zero block per super-block", 1, quantizeQ4_0(kernel.Options{}), blockQ4_0, 14, "679d475a7378ac1a67a9966778adb255e73b"},
		// Σw·x² of make_qkx3_quants is not fused: both 14 and 15 levels fit
		// ±0.03 exactly, rounding noise decides (see the kernel's
		// TestMakeQkx3QuantsExactFit).
		{"qkx3 sum_x2", "random signs ±0.03", 0, quantizeQ4_1(kernel.Search{}), blockQ4_1, 13, "191caea7000ffffff0f00ff000f0ff000ff0f00f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := specialRow(t, tc.row)
			dst := make([]byte, len(x)/qk*tc.size)
			if err := tc.quant(dst, x, 1, len(x), ims[tc.imatrix].W); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(dst[tc.block*tc.size : (tc.block+1)*tc.size]); got != tc.want {
				t.Errorf("block %d = %s, want %s", tc.block, got, tc.want)
			}
		})
	}
}
