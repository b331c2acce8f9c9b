// Package iqk quantizes the IQK non-linear types (iq2_k .. iq6_k, iq2_ks .. iq5_ks, iq2_kl, iq4_kss) and their _r4 forms.
package iqk

import "github.com/gquant/gquant/quantize/kernel"

// Kernels returns the kernels this package implements.
func Kernels() kernel.Set {
	return kernel.Set{}
}
