package iqk

import (
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
)

// TestKernelsGolden runs this package's kernels directly on the golden input
// and reports the share of identical blocks (the exact per-type assertions
// live in quantize/iqk_golden_test.go, which goes through QuantizeRows).
func TestKernelsGolden(t *testing.T) {
	input, imatrix := golden.KernelInput(t)
	set := Kernels()
	for _, c := range golden.Kernels(t) {
		typ, err := formats.ParseType(c.Type)
		if err != nil {
			t.Fatal(err)
		}
		f := set[typ]
		if f == nil {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			var im []float32
			if c.Imatrix {
				im = imatrix
			}
			rs, _ := typ.RowSize(int64(c.Cols))
			got := make([]byte, int(rs)*c.Rows)
			if err := f(got, input, c.Rows, c.Cols, im); err != nil {
				t.Fatal(err)
			}
			want := golden.ReadFile(t, "kernels", c.File)
			share, diff := golden.BlockShare(got, want, int(rs))
			rowsSame := share
			bshare, _ := golden.BlockShare(got, want, typ.TypeSize())
			if share < 1 {
				t.Errorf("rows identical %.3f, %d-byte blocks identical %.3f; %s", rowsSame, typ.TypeSize(), bshare, diff)
			}
		})
	}
}
