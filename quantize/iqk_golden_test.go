package quantize_test

import (
	"bytes"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/quantize/iqk"
)

// iqkTypes are the types of quantize/iqk with the share of identical blocks
// each reaches against ../shared/golden/kernels (see its README.md), per
// imatrix variant. Types with a per-row header are compared row group by row
// group, the others block by block (a block of an _r4 type is four
// interleaved blocks).
var iqkTypes = map[string]struct{ plain, imat float64 }{
	"iq2_k":     {1, 1},
	"iq3_k":     {1, 1},
	"iq4_k":     {1, 1},
	"iq5_k":     {1, 1},
	"iq6_k":     {1, 1},
	"iq2_ks":    {1, 1},
	"iq3_ks":    {1, 1},
	"iq4_ks":    {1, 1},
	"iq5_ks":    {1, 1},
	"iq4_kss":   {1, 1},
	"iq2_kl":    {1, 1},
	"iq2_k_r4":  {1, 1},
	"iq3_k_r4":  {1, 1},
	"iq4_k_r4":  {1, 1},
	"iq5_k_r4":  {1, 1},
	"iq4_ks_r4": {1, 1},
	"iq5_ks_r4": {1, 1},
}

// TestIQKGolden quantizes the whole golden input in one call per type and
// imatrix variant and compares with the reference byte for byte.
func TestIQKGolden(t *testing.T) {
	input, imatrix := golden.KernelInput(t)
	seen := map[string]bool{}
	for _, c := range golden.Kernels(t) {
		shares, ok := iqkTypes[c.Type]
		if !ok {
			continue
		}
		seen[c.Type] = true
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			if !quantize.Supported(typ) {
				t.Fatalf("quantize does not register %s: quantize.go must include iqk.Kernels()", typ)
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
			unit := typ.TypeSize() * typ.Interleave()
			if typ.RowMeta() > 0 {
				rs, _ := typ.RowSize(int64(c.Cols))
				unit = int(rs) * typ.Interleave()
			}
			share, diff := golden.BlockShare(got, ref, unit)
			if share < wantShare {
				t.Errorf("%.4f identical blocks, want %.4f; %s", share, wantShare, diff)
			}
		})
	}
	for name := range iqkTypes {
		if !seen[name] {
			t.Errorf("golden manifest has no case for %s", name)
		}
	}
}

// TestIQ2KSSlowSearch runs the --slow-iq2ks search. The golden data was made
// with llama-quantize's default (the fast search), so the slow one is only
// checked to be deterministic and to differ from the fast one (which shows
// the switch reaches the kernel); its share of blocks equal to the fast
// golden output is logged.
func TestIQ2KSSlowSearch(t *testing.T) {
	input, _ := golden.KernelInput(t)
	if !quantize.Supported(formats.IQ2_KS) {
		t.Fatal("quantize does not register iq2_ks: quantize.go must include iqk.Kernels()")
	}
	const rows, cols = 4, 1024
	fast, err := quantize.QuantizeRows(formats.IQ2_KS, rows, cols, input[:rows*cols], nil)
	if err != nil {
		t.Fatal(err)
	}
	iqk.SlowIQ2KS = true
	defer func() { iqk.SlowIQ2KS = false }()
	slow1, err := quantize.QuantizeRows(formats.IQ2_KS, rows, cols, input[:rows*cols], nil)
	if err != nil {
		t.Fatal(err)
	}
	slow2, _ := quantize.QuantizeRows(formats.IQ2_KS, rows, cols, input[:rows*cols], nil)
	if !bytes.Equal(slow1, slow2) {
		t.Error("slow iq2_ks search is not deterministic")
	}
	if bytes.Equal(slow1, fast) {
		t.Error("slow and fast iq2_ks searches gave identical bytes; is the switch ignored?")
	}
	share, _ := golden.BlockShare(slow1, fast, formats.IQ2_KS.TypeSize())
	t.Logf("slow search: %.3f of blocks equal to the fast search", share)
}
