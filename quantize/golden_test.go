package quantize_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
)

// belowFull lists the (type, imatrix variant) cases of
// ../shared/golden/kernels that do not yet match the reference byte for
// byte, with the share of identical compare units (blocks) reached. Every
// other case must match exactly. A case that improves fails too, so the
// table is kept exact.
var belowFull = map[string]float64{}

// compareUnit is the unit in which a type's bytes are compared: one block
// of every row of a row group, or a whole row group where rows carry a header
// or the type has no blocks.
func compareUnit(t formats.Type, ne0 int) int {
	info, _ := t.Info()
	if info.RowMeta > 0 || !info.Quantized {
		rs, _ := t.RowSize(int64(ne0))
		return int(rs) * info.Interleave
	}
	return info.TypeSize * info.Interleave
}

// TestGoldenKernels quantizes the whole golden input (16 rows of 1024, the
// rows shaped like real weights) in one QuantizeRows call per type and
// imatrix variant, as the reference's one ggml_quantize_chunk call did, and
// compares with its bytes; where the reference dequantized its output, our
// dequantization of identical bytes must give the same bits.
func TestGoldenKernels(t *testing.T) {
	input, imatrix := golden.KernelInput(t)
	cases := golden.Kernels(t)
	if len(cases) < 130 {
		t.Fatalf("only %d cases in the manifest", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			if !quantize.Supported(typ) {
				t.Fatalf("no quantizer for %s", typ)
			}
			var weights []float32
			if c.Imatrix {
				weights = imatrix
			}
			got, err := quantize.QuantizeRows(typ, c.Rows, c.Cols, input, weights)
			if err != nil {
				t.Fatal(err)
			}
			want := golden.ReadFile(t, "kernels", c.File)
			share, first := golden.BlockShare(got, want, compareUnit(typ, c.Cols))
			wantShare, partial := belowFull[c.Name()]
			if !partial {
				wantShare = 1
			}
			switch {
			case share < wantShare:
				t.Fatalf("%.4f of blocks identical, want %.4f (%s)", share, wantShare, first)
			case share > wantShare:
				t.Errorf("%.4f of blocks identical, better than the %.4f in belowFull: update the table", share, wantShare)
			}
			if c.Dequant == "" || share < 1 {
				return
			}
			deq := make([]float32, c.Rows*c.Cols)
			if err := formats.DequantizeRows(typ, c.Cols, got, deq); err != nil {
				t.Fatal(err)
			}
			for i, v := range golden.F32(golden.ReadFile(t, "kernels", c.Dequant)) {
				if math.Float32bits(deq[i]) != math.Float32bits(v) {
					t.Fatalf("weight %d dequantizes to %v, the reference's to %v", i, deq[i], v)
				}
			}
		})
	}
}

// TestNeedsImatrix: the kernel refuses the types the reference's kernel
// refuses without an importance matrix; their interleaved forms it accepts.
func TestNeedsImatrix(t *testing.T) {
	x := make([]float32, 4*256)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	for _, tc := range []struct {
		t      formats.Type
		refuse bool
	}{
		{formats.IQ2_XXS, true}, {formats.IQ2_XS, true}, {formats.IQ1_S, true},
		{formats.IQ2_XXS_R4, false}, {formats.IQ2_XS_R4, false}, {formats.IQ1_S_R4, false}, {formats.IQ2_S, false},
	} {
		_, err := quantize.QuantizeRows(tc.t, 4, 256, x, nil)
		if (err != nil) != tc.refuse {
			t.Errorf("%s without an importance matrix: %v", tc.t, err)
		}
	}
}

// TestIQ2KSSlowSearch runs the --slow-iq2ks search. The golden data was made
// with llama-quantize's default (the fast search), so the slow one is only
// checked to be deterministic and to differ from the fast one, which shows
// that the switch reaches the kernel.
func TestIQ2KSSlowSearch(t *testing.T) {
	input, _ := golden.KernelInput(t)
	const rows, cols = 4, 1024
	fast, err := quantize.QuantizeRows(formats.IQ2_KS, rows, cols, input[:rows*cols], nil)
	if err != nil {
		t.Fatal(err)
	}
	slow := quantize.Options{SlowIQ2KS: true}
	slow1, err := slow.QuantizeRows(formats.IQ2_KS, rows, cols, input[:rows*cols], nil)
	if err != nil {
		t.Fatal(err)
	}
	slow2, _ := slow.QuantizeRows(formats.IQ2_KS, rows, cols, input[:rows*cols], nil)
	if !bytes.Equal(slow1, slow2) {
		t.Error("the slow iq2_ks search is not deterministic")
	}
	if bytes.Equal(slow1, fast) {
		t.Error("--slow-iq2ks does not reach the kernel")
	}
}
