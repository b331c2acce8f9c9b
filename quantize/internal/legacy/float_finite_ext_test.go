package legacy_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/quantize/internal/legacy"
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

// TestQuantizeRowsChecksImportance checks the importance matrix check that
// QuantizeRows runs on every call: negative, infinite and NaN weights are
// rejected, naming the first one, and -0 is accepted.
func TestQuantizeRowsChecksImportance(t *testing.T) {
	const rows, cols = 16, 512
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(i%13) - 6
	}
	negZero := float32(math.Copysign(0, -1))
	for _, typ := range quantize.SupportedTypes() {
		if !legacy.ChecksFinite(typ) {
			continue
		}
		for _, tc := range []struct {
			name string
			bad  float32
			ok   bool
		}{
			{"negative", -1e-30, false}, {"+Inf", float32(math.Inf(1)), false},
			{"NaN", float32(math.NaN()), false}, {"-0", negZero, true},
		} {
			imatrix := make([]float32, cols)
			for i := range imatrix {
				imatrix[i] = 1
			}
			imatrix[cols-5] = tc.bad
			imatrix[cols-2] = tc.bad
			_, err := quantize.QuantizeRows(typ, rows, cols, src, imatrix)
			switch {
			case tc.ok && err != nil:
				t.Errorf("%s, %s weight: %v", typ, tc.name, err)
			case !tc.ok && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("weight %d ", cols-5))):
				t.Errorf("%s, %s weight: error %v, want one naming weight %d", typ, tc.name, err, cols-5)
			}
		}
	}
}
