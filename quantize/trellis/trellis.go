// Package trellis quantizes the trellis types (iq1_kt .. iq4_kt).
package trellis

import "github.com/gquant/gquant/quantize/kernel"

// Kernels returns the kernels this package implements.
func Kernels() kernel.Set {
	return kernel.Set{}
}
