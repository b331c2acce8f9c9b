package legacy_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/quantize/legacy"
)

// TestQuantizeRowsNamesNonFinite checks the plumbing in quantize for the
// kernels that check their own input: an infinity or NaN still comes back
// as a *quantize.RowError naming its row and column, also when the
// importance matrix is bad too (the input is reported first, as for every
// other type).
func TestQuantizeRowsNamesNonFinite(t *testing.T) {
	const rows, cols = 16, 512
	for _, typ := range quantize.SupportedTypes() {
		if !legacy.ChecksFinite(typ) {
			continue
		}
		for _, badImatrix := range []bool{false, true} {
			src := make([]float32, rows*cols)
			for i := range src {
				src[i] = float32(i%13) - 6
			}
			src[9*cols+17] = float32(math.Inf(-1))
			src[11*cols+3] = float32(math.NaN())
			imatrix := make([]float32, cols)
			if badImatrix {
				imatrix[5] = -1
			}
			_, err := quantize.QuantizeRows(typ, rows, cols, src, imatrix)
			var rowErr *quantize.RowError
			if !errors.As(err, &rowErr) {
				t.Fatalf("%s: error %v, want a *RowError", typ, err)
			}
			if rowErr.Row != 9 || rowErr.Column != 17 || !math.IsInf(float64(rowErr.Value), -1) {
				t.Errorf("%s: error names row %d column %d value %v, want row 9 column 17 value -Inf",
					typ, rowErr.Row, rowErr.Column, rowErr.Value)
			}
		}
	}
}
