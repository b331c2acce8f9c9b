// Package ternary quantizes the ternary types (iq1_bn, iq2_bn, iq2_bn_r4).
package ternary

import "github.com/gquant/gquant/quantize/kernel"

// Kernels returns the kernels this package implements.
func Kernels() kernel.Set {
	return kernel.Set{}
}
