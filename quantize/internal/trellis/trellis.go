// Package trellis quantizes the trellis types (iq1_kt .. iq4_kt): groups of
// 4 or 8 weights are replaced by the index of the nearest codeword of a
// pseudo-random codebook (formats.KTCodeword), with 4-bit block scales and
// one float32 scale per row. It ports the reference's AVX2 search exactly.
package trellis

import (
	"fmt"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Kernels returns the kernels this package implements; no option changes
// them.
func Kernels(kernel.Options) kernel.Set {
	return kernel.Set{
		formats.IQ1_KT: rowKernel(formats.IQ1_KT, 8, quantizeRowIQ1KT),
		formats.IQ2_KT: rowKernel(formats.IQ2_KT, 8, quantizeRowIQ2KT),
		formats.IQ3_KT: rowKernel(formats.IQ3_KT, 8, quantizeRowIQ3KT),
		formats.IQ4_KT: rowKernel(formats.IQ4_KT, 4, quantizeRowIQ4KT),
	}
}

// rowFunc quantizes one row. It returns an error (a *kernel.OverflowError)
// where the values overflow its float32 searches, which stops the kernel
// call.
type rowFunc func(dst []byte, x, imatrix []float32, sc *rowScratch) error

// The errors the row quantizers return where the values are so large that a
// float32 search overflows (see kernel.OverflowError).
var (
	errNoCodeword      = &kernel.OverflowError{Cause: "trellis: codebook search found no codeword"}
	errIQ3KTNoSolution = &kernel.OverflowError{Cause: "trellis: iq3_kt found no solution for a block"}
)

// rowKernel runs a one-row quantizer over all rows, one after the other.
// Rows are independent, but the pipeline already runs one kernel call per
// worker on every core, so spreading the rows of one call over goroutines
// would only add scheduling and scratch allocations.
func rowKernel(t formats.Type, group int, row rowFunc) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		if ne0%superBlock != 0 {
			return fmt.Errorf("trellis: %s rows of %d weights are not a multiple of %d", t, ne0, superBlock)
		}
		rs, err := t.RowSize(int64(ne0))
		if err != nil {
			return err
		}
		sc := newRowScratch(ne0, group)
		for i := 0; i < nrows; i++ {
			if err := row(dst[i*int(rs):(i+1)*int(rs)], src[i*ne0:(i+1)*ne0], imatrix, sc); err != nil {
				return err
			}
		}
		return nil
	}
}
