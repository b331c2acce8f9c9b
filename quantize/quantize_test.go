package quantize_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
)

// anySupported returns a supported type with the given interleave, failing
// the test's precondition (skip) when no family provides one.
func anySupported(t *testing.T, interleave int) formats.Type {
	t.Helper()
	for _, typ := range quantize.SupportedTypes() {
		if typ.IsQuantized() && typ.Interleave() == interleave && !needsImatrix(typ) {
			return typ
		}
	}
	t.Skipf("no supported quantized type with interleave %d", interleave)
	return 0
}

func TestQuantizeRowsRejectsNonFinite(t *testing.T) {
	typ := anySupported(t, 1)
	const rows, cols = 4, 256
	for _, tc := range []struct {
		name  string
		value float32
	}{
		{"NaN", float32(math.NaN())},
		{"+Inf", float32(math.Inf(1))},
		{"-Inf", float32(math.Inf(-1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := make([]float32, rows*cols)
			src[2*cols+17] = tc.value
			_, err := quantize.QuantizeRows(typ, rows, cols, src, nil)
			var rowErr *quantize.RowError
			if !errors.As(err, &rowErr) {
				t.Fatalf("error %v, want a *RowError", err)
			}
			if rowErr.Row != 2 || rowErr.Column != 17 {
				t.Errorf("error names row %d column %d, want row 2 column 17", rowErr.Row, rowErr.Column)
			}
			if !strings.Contains(err.Error(), "row 2") {
				t.Errorf("error %q does not name the row", err)
			}
		})
	}
}

func TestQuantizeRowsRejectsBadShapes(t *testing.T) {
	typ := anySupported(t, 1)
	bs := typ.BlockSize()
	for _, tc := range []struct {
		name             string
		rows, cols, nsrc int
		imatrix          int // length, 0 = none
	}{
		{"row not a multiple of the block", 2, bs + 1, 2 * (bs + 1), 0},
		{"source too short", 2, bs, 2*bs - 1, 0},
		{"imatrix of the wrong length", 2, bs, 2 * bs, bs - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w []float32
			if tc.imatrix > 0 {
				w = make([]float32, tc.imatrix)
			}
			if _, err := quantize.QuantizeRows(typ, tc.rows, tc.cols, make([]float32, tc.nsrc), w); err == nil {
				t.Fatalf("%s: no error", typ)
			}
		})
	}
}

func TestQuantizeRowsRejectsPartialRowGroups(t *testing.T) {
	for _, typ := range quantize.SupportedTypes() {
		if typ.Interleave() < 2 {
			continue
		}
		cols := typ.BlockSize() * 8
		rows := typ.Interleave() + 1
		if _, err := quantize.QuantizeRows(typ, rows, cols, make([]float32, rows*cols), make([]float32, cols)); err == nil {
			t.Errorf("%s: %d rows accepted", typ, rows)
		}
		return
	}
	t.Skip("no interleaved type supported")
}

func TestQuantizeRowsUnsupported(t *testing.T) {
	if _, err := quantize.QuantizeRows(formats.Q8_K_R16, 8, 256, make([]float32, 8*256), nil); !errors.Is(err, quantize.ErrUnsupported) {
		t.Errorf("q8_k_r16: error %v, want ErrUnsupported", err)
	}
}

// TestQuantizeRowsImatrixRefused: the types whose reference kernel stops on
// importance weights (the ARM repacks of q4_0) refuse them, and only them.
func TestQuantizeRowsImatrixRefused(t *testing.T) {
	const cols = 64
	for _, typ := range quantize.SupportedTypes() {
		rows := typ.Interleave()
		_, err := quantize.QuantizeRows(typ, rows, cols*4, make([]float32, rows*cols*4), make([]float32, cols*4))
		if refused := errors.Is(err, quantize.ErrImatrixRefused); refused != imatrixFails(typ) {
			t.Errorf("%s with importance weights: %v", typ, err)
		}
	}
	for _, typ := range []formats.Type{formats.Q4_0_4X4, formats.Q4_0_4X8, formats.Q4_0_8X8} {
		if _, err := quantize.QuantizeRows(typ, 8, cols, make([]float32, 8*cols), nil); err != nil {
			t.Errorf("%s without importance weights: %v", typ, err)
		}
	}
}

func needsImatrix(t formats.Type) bool {
	info, _ := t.Info()
	return info.NeedsImatrix
}

func imatrixFails(t formats.Type) bool {
	info, _ := t.Info()
	return info.ImatrixFails
}

// weightsFor is w, or nil for a type that takes no importance weights.
func weightsFor(t formats.Type, w []float32) []float32 {
	if imatrixFails(t) {
		return nil
	}
	return w
}

// TestQuantizeRowsHugeValues feeds every type finite values so large that
// the float32 searches overflow (the reference stops on an assertion for
// several of them): each call must return, with bytes or with an error that
// names the type and the largest value (an *OverflowError), never panic.
func TestQuantizeRowsHugeValues(t *testing.T) {
	const cols = 256
	imatrix := make([]float32, cols)
	for i := range imatrix {
		imatrix[i] = 1
	}
	for _, typ := range quantize.SupportedTypes() {
		for _, big := range []float32{1e16, 1e30, math.MaxFloat32} {
			rows := max(typ.Interleave(), 1)
			src := make([]float32, rows*cols)
			for i := range src {
				src[i] = big * (float32((i*7919)%13-6) / 6)
			}
			_, err := func() (_ []byte, err error) {
				defer func() {
					if r := recover(); r != nil {
						err = nil
						t.Errorf("%v, values up to %g: panic: %v", typ, big, r)
					}
				}()
				return quantize.QuantizeRows(typ, rows, cols, src, weightsFor(typ, imatrix))
			}()
			var oe *quantize.OverflowError
			if err != nil && (!errors.As(err, &oe) || oe.Type != typ || math.Abs(float64(oe.Value)) != math.Abs(float64(big)) || !strings.Contains(err.Error(), typ.String())) {
				t.Errorf("%v, values up to %g: error %v is not an OverflowError naming the type and the largest value", typ, big, err)
			}
		}
	}
}

// TestQuantizeRowsNoRows: a call of no rows writes nothing and succeeds, as
// the reference's does, for every type; a type that needs importance
// weights still says so.
func TestQuantizeRowsNoRows(t *testing.T) {
	for _, typ := range quantize.SupportedTypes() {
		out, err := quantize.QuantizeRows(typ, 0, 256, nil, nil)
		if needsImatrix(typ) {
			if !errors.Is(err, quantize.ErrNeedsImatrix) {
				t.Errorf("%s: %v, want ErrNeedsImatrix", typ, err)
			}
			continue
		}
		if err != nil || len(out) != 0 {
			t.Errorf("%s: %d bytes, %v", typ, len(out), err)
		}
	}
}
