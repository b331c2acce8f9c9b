package legacy

import (
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
)

// wantShare is the share of identical blocks each kernel reaches against the
// reference's output in ../shared/golden/kernels (see its README.md); 1 means
// byte for byte. q4_1 with an imatrix differs in one block of 512: in
// make_qkx3_quants' final refinement the reference takes a step whose score
// beats the best by about 1 ulp of float64, ours scores it 1 ulp lower; no
// contraction pattern of the score explains it without breaking q5_1.
var wantShare = map[string]struct{ plain, imat float64 }{
	"q4_1": {1, 511.0 / 512},
}

// TestKernelsGolden runs every kernel of the package directly (without the
// quantize registry) over the golden input. quantize/legacy_golden_test.go
// repeats it through quantize.QuantizeRows and also checks dequantization.
func TestKernelsGolden(t *testing.T) {
	input, imatrix := golden.KernelInput(t)
	set := Kernels()
	seen := map[formats.Type]bool{}
	for _, c := range golden.Kernels(t) {
		typ, err := formats.ParseType(c.Type)
		if err != nil {
			t.Fatal(err)
		}
		f := set[typ]
		if f == nil {
			continue
		}
		seen[typ] = true
		t.Run(c.Name(), func(t *testing.T) {
			want, ok := wantShare[c.Type]
			if !ok {
				want.plain, want.imat = 1, 1
			}
			var weights []float32
			share := want.plain
			if c.Imatrix {
				weights, share = imatrix, want.imat
			}
			rs, err := typ.RowSize(int64(c.Cols))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, int(rs)*c.Rows)
			if err := f(got, input, c.Rows, c.Cols, weights); err != nil {
				t.Fatal(err)
			}
			info, _ := typ.Info()
			unit := info.TypeSize * info.Interleave
			if info.RowMeta > 0 || !info.Quantized {
				unit = int(rs) * info.Interleave
			}
			reached, diff := golden.BlockShare(got, golden.ReadFile(t, "kernels", c.File), unit)
			if reached < share {
				t.Errorf("%.4f identical blocks, want %.4f; %s", reached, share, diff)
			}
		})
	}
	for typ := range set {
		if !seen[typ] {
			t.Errorf("no golden output for %s", typ)
		}
	}
}
