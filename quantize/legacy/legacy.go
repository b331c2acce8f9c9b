// Package legacy quantizes the legacy 32-weight block types (q4_0 .. q8_0, q6_0, q1_0_g128), the float types, mxfp4 and q8_KV, with their interleaved forms.
package legacy

import "github.com/gquant/gquant/quantize/kernel"

// Kernels returns the kernels this package implements.
func Kernels() kernel.Set {
	return kernel.Set{}
}
