// Package iquant quantizes the IQ grid types (iq1_s .. iq4_xs) and their
// interleaved forms, as ik_llama.cpp's ggml-quants.c and iqk_quantize.cpp do.
package iquant

import (
	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/kernel"
)

// Kernels returns the kernels this package implements.
func Kernels() kernel.Set {
	return kernel.Set{
		formats.IQ4_NL:     rowsKernel(formats.IQ4_NL, quantizeIQ4NLRow),
		formats.IQ4_XS:     rowsKernel(formats.IQ4_XS, quantizeIQ4XSRow),
		formats.IQ4_NL_R4:  repackKernel(formats.IQ4_NL_R4, 32, quantizeIQ4NLRow),
		formats.IQ4_XS_R8:  repackKernel(formats.IQ4_XS_R8, 32, quantizeIQ4XSRow),
		formats.IQ2_XXS:    rowsKernel(formats.IQ2_XXS, quantizeIQ2XXSRow),
		formats.IQ2_XS:     rowsKernel(formats.IQ2_XS, quantizeIQ2XSRow),
		formats.IQ2_S:      rowsKernel(formats.IQ2_S, quantizeIQ2SRow),
		formats.IQ2_XXS_R4: repackKernel(formats.IQ2_XXS_R4, 32, quantizeIQ2XXSRow),
		formats.IQ2_XS_R4:  repackKernel(formats.IQ2_XS_R4, 16, quantizeIQ2XSRow),
		formats.IQ2_S_R4:   repackKernel(formats.IQ2_S_R4, 16, quantizeIQ2SRow),
		formats.IQ1_S:      rowsKernel(formats.IQ1_S, quantizeIQ1SRow),
		formats.IQ1_M:      iq1mKernel,
		formats.IQ1_S_R4:   iq1sR4Kernel,
		formats.IQ1_M_R4:   iq1mR4Kernel,
		formats.IQ3_XXS:    rowsKernel(formats.IQ3_XXS, quantizeIQ3XXSRow),
		formats.IQ3_S:      rowsKernel(formats.IQ3_S, quantizeIQ3SRow),
		formats.IQ3_XXS_R4: repackKernel(formats.IQ3_XXS_R4, 32, quantizeIQ3XXSRow),
		formats.IQ3_S_R4:   repackKernel(formats.IQ3_S_R4, 16, quantizeIQ3SRow),
	}
}
