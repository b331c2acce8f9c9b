// Package iquant quantizes the IQ grid types (iq1_s .. iq4_xs) and their
// interleaved forms, as ik_llama.cpp's ggml-quants.c and iqk_quantize.cpp do.
package iquant

import (
	"fmt"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Kernels returns the kernels this package implements, for options o (only
// Portable matters here).
func Kernels(o kernel.Options) kernel.Set {
	return kernel.Set{
		formats.IQ4_NL:     rowsKernel(formats.IQ4_NL, total(quantizeIQ4NLRow)),
		formats.IQ4_XS:     rowsKernel(formats.IQ4_XS, total(quantizeIQ4XSRow)),
		formats.IQ4_NL_R4:  repackKernel(formats.IQ4_NL_R4, 32, total(quantizeIQ4NLRow)),
		formats.IQ4_XS_R8:  repackKernel(formats.IQ4_XS_R8, 32, total(quantizeIQ4XSRow)),
		formats.IQ2_XXS:    rowsKernel(formats.IQ2_XXS, iq2xxsRows(o.Search())),
		formats.IQ2_XS:     rowsKernel(formats.IQ2_XS, mayOverflow(quantizeIQ2XSRow)),
		formats.IQ2_S:      rowsKernel(formats.IQ2_S, mayOverflow(quantizeIQ2SRow)),
		formats.IQ2_XXS_R4: repackKernel(formats.IQ2_XXS_R4, 32, iq2xxsRows(o.Search())),
		formats.IQ2_XS_R4:  repackKernel(formats.IQ2_XS_R4, 16, mayOverflow(quantizeIQ2XSRow)),
		formats.IQ2_S_R4:   repackKernel(formats.IQ2_S_R4, 16, mayOverflow(quantizeIQ2SRow)),
		formats.IQ1_S:      rowsKernel(formats.IQ1_S, quantizeIQ1SRow),
		formats.IQ1_M:      iq1mKernel,
		formats.IQ1_S_R4:   iq1sR4Kernel,
		formats.IQ1_M_R4:   iq1mR4Kernel,
		formats.IQ3_XXS:    rowsKernel(formats.IQ3_XXS, mayOverflow(quantizeIQ3XXSRow)),
		formats.IQ3_S:      rowsKernel(formats.IQ3_S, mayOverflow(quantizeIQ3SRow)),
		formats.IQ3_XXS_R4: repackKernel(formats.IQ3_XXS_R4, 32, mayOverflow(quantizeIQ3XXSRow)),
		formats.IQ3_S_R4:   repackKernel(formats.IQ3_S_R4, 16, mayOverflow(quantizeIQ3SRow)),
	}
}

// The errors the kernels return where the values are so large that a
// float32 search overflows (see kernel.OverflowError), by the search that
// found nothing.
var (
	errNoNeighbour   = &kernel.OverflowError{Cause: "iquant: no grid neighbour at a finite distance"}
	errIQ2XXSOffGrid = &kernel.OverflowError{Cause: "iquant: iq2_xxs block off the grid with uniform importance"}
	errIQ1SNoSplit   = &kernel.OverflowError{Cause: "iquant: iq1_s block without a split under uniform importance"}
	errIQ1MNoSplit   = &kernel.OverflowError{Cause: "iquant: iq1_m block without a split"}
)

// FallbackError is what a kernel returns when it wrote every row, but some
// of them (Rows, indices within the call, ascending) partly by a substitute
// encoding, where the reference stops the whole process (an assertion). The
// bytes are complete, valid and deterministic; every other row is the
// reference's. Reason says what the reference does and what was written.
type FallbackError struct {
	Type   formats.Type
	Rows   []int
	Reason string
}

func (e *FallbackError) Error() string {
	return fmt.Sprintf("iquant: %s: %d rows written by a fallback: %s", e.Type, len(e.Rows), e.Reason)
}

// fallbackReasons says, per base type whose row quantizer can substitute,
// what the reference does and what we write instead.
var fallbackReasons = map[formats.Type]string{
	formats.IQ2_XXS: "blocks of 32 whose non-zero values all have importance 0, on which the reference aborts " +
		"(\"Oops: found point ... not on grid\"), were quantized with uniform importance",
	formats.IQ1_S: "blocks of 32 whose importance is all 0, on which the reference aborts " +
		"(GGML_ASSERT(besti1 >= 0 && besti2 >= 0 && best_shift != 0)), were quantized with uniform importance",
}
