package quantize_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
)

// legacyTypes are the types of quantize/legacy with the share of identical
// blocks each reaches against the reference's output in
// ../shared/golden/kernels (see its README.md), per imatrix variant; 1 means
// byte for byte. A block of an interleaved type is one block of every row of
// the group; for q8_KV it is a row, for the float types a row group.
var legacyTypes = map[string]struct{ plain, imat float64 }{
	"f16":       {1, 1},
	"bf16":      {1, 1},
	"bf16_r16":  {1, 1},
	"q4_0":      {1, 1},
	"q4_1":      {1, 511.0 / 512}, // see quantize/legacy/golden_test.go
	"q5_0":      {1, 1},
	"q5_1":      {1, 1},
	"q6_0":      {1, 1},
	"q8_0":      {1, 1},
	"q1_0_g128": {1, 1},
	"mxfp4":     {1, 1},
	"q8_KV":     {1, 1},
	"q4_0_r8":   {1, 1},
	"q5_0_r4":   {1, 1},
	"q6_0_r4":   {1, 1},
	"q8_0_r8":   {1, 1},
	"mxfp4_r8":  {1, 1},
	"q8_KV_r8":  {1, 1},
	"q8_k_r8":   {1, 1},
}

// legacyCompareUnit is the unit BlockShare compares in for t.
func legacyCompareUnit(t formats.Type, ne0 int) int {
	info, _ := t.Info()
	if info.RowMeta > 0 || !info.Quantized {
		rs, _ := t.RowSize(int64(ne0))
		return int(rs) * info.Interleave
	}
	return info.TypeSize * info.Interleave
}

// TestLegacyGolden quantizes the whole golden input in one QuantizeRows call
// per type and imatrix variant and compares with the reference's bytes; where
// the reference dequantized its output, ours must dequantize to the same bits.
func TestLegacyGolden(t *testing.T) {
	input, imatrix := golden.KernelInput(t)
	seen := map[string]bool{}
	for _, c := range golden.Kernels(t) {
		want, ok := legacyTypes[c.Type]
		if !ok {
			continue
		}
		seen[c.Type] = true
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			var weights []float32
			wantShare := want.plain
			if c.Imatrix {
				weights, wantShare = imatrix, want.imat
			}
			if !quantize.Supported(typ) {
				// quantize/legacy.Kernels() is not in the registry of quantize.go
				// (quantize/legacy/golden_test.go checks the kernels directly).
				t.Skipf("%s is not registered in quantize.go", typ)
			}
			got, err := quantize.QuantizeRows(typ, c.Rows, c.Cols, input, weights)
			if err != nil {
				t.Fatal(err)
			}
			ref := golden.ReadFile(t, "kernels", c.File)
			share, diff := golden.BlockShare(got, ref, legacyCompareUnit(typ, c.Cols))
			t.Logf("%.2f%% identical blocks", 100*share)
			if share < wantShare {
				t.Errorf("%.4f identical blocks, want %.4f; %s", share, wantShare, diff)
			}
			if c.Dequant == "" {
				return
			}
			t.Run("dequant", func(t *testing.T) {
				if share < 1 {
					t.Skipf("bytes differ in %.2f%% of blocks", 100*(1-share))
				}
				deq := make([]float32, c.Rows*c.Cols)
				if err := formats.DequantizeRows(typ, c.Cols, got, deq); err != nil {
					if strings.Contains(err.Error(), "no dequantizer") {
						t.Skip(err)
					}
					t.Fatal(err)
				}
				wantDeq := golden.F32(golden.ReadFile(t, "kernels", c.Dequant))
				for i := range deq {
					if math.Float32bits(deq[i]) != math.Float32bits(wantDeq[i]) {
						t.Fatalf("weight %d (row %d): %v, want %v", i, i/c.Cols, deq[i], wantDeq[i])
					}
				}
			})
		})
	}
	for name := range legacyTypes {
		if !seen[name] {
			t.Errorf("no golden output for %s in kernels/manifest.tsv", name)
		}
	}
}
