// Package iquant quantizes the IQ grid types (iq1_s .. iq4_xs) and their interleaved forms.
package iquant

import "github.com/gquant/gquant/quantize/kernel"

// Kernels returns the kernels this package implements.
func Kernels() kernel.Set {
	return kernel.Set{}
}
