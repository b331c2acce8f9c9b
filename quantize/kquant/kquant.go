// Package kquant quantizes the K-quants (q2_K .. q6_K) and their _r4 forms.
package kquant

import "github.com/gquant/gquant/quantize/kernel"

// Kernels returns the kernels this package implements.
func Kernels() kernel.Set {
	return kernel.Set{}
}
