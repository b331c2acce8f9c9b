// Package iqk quantizes the IQK non-linear types (iq2_k .. iq6_k, iq2_ks .. iq5_ks, iq2_kl, iq4_kss) and their _r4 forms.
package iqk

import (
	"fmt"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Kernels returns the kernels this package implements, for options o (only
// SlowIQ2KS matters here).
func Kernels(o kernel.Options) kernel.Set {
	iq2ks := quantizeIQ2KS
	if o.SlowIQ2KS {
		iq2ks = quantizeIQ2KSSlow
	}
	set := kernel.Set{
		formats.IQ2_K:   rowKernel(formats.IQ2_K, 16, total(quantizeIQ2K)),
		formats.IQ3_K:   rowKernel(formats.IQ3_K, 16, total(quantizeIQ3K)),
		formats.IQ4_K:   rowKernel(formats.IQ4_K, 16, total(quantizeIQ4K)),
		formats.IQ5_K:   rowKernel(formats.IQ5_K, 16, total(quantizeIQ5K)),
		formats.IQ6_K:   rowKernel(formats.IQ6_K, 16, total(quantizeIQ6K)),
		formats.IQ4_KS:  rowKernel(formats.IQ4_KS, 32, total(quantizeIQ4KS)),
		formats.IQ2_KS:  rowKernel(formats.IQ2_KS, 32, total(iq2ks)),
		formats.IQ3_KS:  rowKernel(formats.IQ3_KS, 32, total(quantizeIQ3KS)),
		formats.IQ5_KS:  rowKernel(formats.IQ5_KS, 32, total(quantizeIQ5KS)),
		formats.IQ4_KSS: rowKernel(formats.IQ4_KSS, 32, total(quantizeIQ4KSS)),
		formats.IQ2_KL:  rowKernel(formats.IQ2_KL, 32, quantizeIQ2KL),
	}
	// The _r4 forms quantize four rows of the base type, then interleave them.
	for _, r4 := range []formats.Type{formats.IQ2_K_R4, formats.IQ3_K_R4, formats.IQ4_K_R4, formats.IQ5_K_R4, formats.IQ4_KS_R4, formats.IQ5_KS_R4} {
		if base := set[r4.Base()]; base != nil {
			set[r4] = interleavedKernel(r4, base)
		}
	}
	return set
}

// rowKernel makes a kernel of a row-at-a-time quantizer whose importance
// weights are sanitised in blocks of blockSize.
func rowKernel(t formats.Type, blockSize int, q rowQuantizer) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		rs, err := t.RowSize(int64(ne0))
		if err != nil {
			return err
		}
		return quantizeRows(dst, src, nrows, ne0, imatrix, blockSize, int(rs), q)
	}
}

// interleavedKernel quantizes each group of r4.Interleave() rows with the
// base kernel and repacks the group, as the reference's quantize_*_r4 do.
func interleavedKernel(r4 formats.Type, base kernel.Func) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		n := r4.Interleave()
		rs, err := r4.Base().RowSize(int64(ne0))
		if err != nil {
			return err
		}
		groupBytes := n * int(rs)
		tmp := make([]byte, groupBytes)
		for r := 0; r < nrows; r += n {
			if err := base(tmp, src[r*ne0:(r+n)*ne0], n, ne0, imatrix); err != nil {
				return err
			}
			if err := formats.Interleave(r4, ne0, dst[r/n*groupBytes:(r/n+1)*groupBytes], tmp); err != nil {
				return fmt.Errorf("iqk: %s: %w", r4, err)
			}
		}
		return nil
	}
}
