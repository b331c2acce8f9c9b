package quantize

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// TestOverflowErrors: rows so large that the float32 searches of the grid,
// split, pair and trellis codebook kernels find no candidate at a finite
// distance (the reference stops on an assertion there) come back as an
// *OverflowError naming the type, the largest value and the search (the
// kernel's *kernel.OverflowError), one case for each place a kernel
// returns one.
func TestOverflowErrors(t *testing.T) {
	const cols = 256
	for _, c := range []struct {
		typ      formats.Type
		big      float32
		imatrix  bool
		overflow string
	}{
		{formats.IQ2_S, 1e17, false, "iquant: no grid neighbour at a finite distance"},
		{formats.IQ3_XXS_R4, 1e17, true, "iquant: no grid neighbour at a finite distance"},
		{formats.IQ2_XS, 1e17, true, "iquant: no grid neighbour at a finite distance"},
		{formats.IQ2_XXS, 1e20, true, "iquant: iq2_xxs block off the grid with uniform importance"},
		{formats.IQ1_S, 1e20, true, "iquant: iq1_s block without a split under uniform importance"},
		{formats.IQ1_M, 1e17, false, "iquant: iq1_m block without a split"},
		{formats.IQ1_M_R4, 1e20, true, "iquant: iq1_m block without a split"},
		{formats.IQ2_KL, 1e20, false, "iqk: iq2_kl pair without a grid neighbour at a finite distance"},
		{formats.IQ2_KT, 1e20, true, "trellis: codebook search found no codeword"},
		{formats.IQ4_KT, 1e20, false, "trellis: codebook search found no codeword"},
		{formats.IQ3_KT, 1e17, false, "trellis: iq3_kt found no solution for a block"},
	} {
		rows := c.typ.Interleave()
		src := make([]float32, rows*cols)
		var amax float32
		for i := range src {
			src[i] = c.big * float32((i*7919)%13-6) / 6
			if i%5 == 0 {
				src[i] = c.big * float32(i%11) / 11
			}
			amax = max(amax, kernel.Abs32(src[i]))
		}
		var im []float32
		if c.imatrix {
			im = make([]float32, cols)
			for i := range im {
				im[i] = float32(1 + i%3)
			}
		}
		_, err := QuantizeRows(c.typ, rows, cols, src, im)
		var oe *OverflowError
		if !errors.As(err, &oe) || oe.Type != c.typ || kernel.Abs32(oe.Value) != amax || oe.Cause != c.overflow ||
			!strings.Contains(err.Error(), c.typ.String()) || !strings.Contains(err.Error(), c.overflow) {
			t.Errorf("%s, values up to %g, imatrix %v: %v, want an OverflowError naming the type, %g and %q", c.typ, c.big, c.imatrix, err, amax, c.overflow)
		}
	}
}

// TestRunKernel: runKernel turns a kernel's *kernel.OverflowError (wrapped
// or not) into an *OverflowError at the largest magnitude, returns every
// other result as it is, and recovers no panic (a bug goes on with its
// value).
func TestRunKernel(t *testing.T) {
	src := []float32{1, -3e20, 2, 5, 1e20, -4, 0, 1}
	overflow := &kernel.OverflowError{Cause: "test: no candidate"}
	other := errors.New("test: another error")
	for name, c := range map[string]struct {
		err  error
		want error
	}{
		"overflow":         {overflow, &OverflowError{Type: formats.IQ2_S, Row: 0, Column: 1, Value: -3e20, Cause: "test: no candidate"}},
		"wrapped overflow": {fmt.Errorf("test: %w", overflow), &OverflowError{Type: formats.IQ2_S, Row: 0, Column: 1, Value: -3e20, Cause: "test: no candidate"}},
		"other":            {other, other},
		"none":             {nil, nil},
	} {
		f := func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error { return c.err }
		err := runKernel(f, formats.IQ2_S, nil, src, 2, 4, nil)
		var oe, want *OverflowError
		if errors.As(c.want, &want) {
			if !errors.As(err, &oe) || *oe != *want {
				t.Errorf("%s: got %#v, want %#v", name, err, want)
			}
		} else if err != c.want {
			t.Errorf("%s: got %#v, want %#v", name, err, c.want)
		}
	}

	var indexBug []int
	for name, f := range map[string]kernel.Func{
		"index": func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
			_ = indexBug[nrows]
			return nil
		},
		"value": func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
			panic(fmt.Errorf("a bug"))
		},
		"overflow error": func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
			panic(&kernel.OverflowError{Cause: "test: no candidate"}) // returned, not panicked, by the kernels
		},
	} {
		t.Run(name, func(t *testing.T) {
			var got any
			func() {
				defer func() { got = recover() }()
				err := runKernel(f, formats.IQ2_S, nil, src, 2, 4, nil)
				t.Errorf("runKernel returned %v instead of panicking", err)
			}()
			if got == nil {
				t.Fatal("no panic")
			}
			if name == "index" {
				if _, ok := got.(interface{ RuntimeError() }); !ok {
					t.Errorf("panic %v (%T) is not the runtime error", got, got)
				}
			}
		})
	}
}
