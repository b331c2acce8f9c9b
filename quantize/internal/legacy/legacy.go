// Package legacy quantizes the legacy 32-weight block types (q4_0 .. q8_0, q6_0, q1_0_g128), the float types, mxfp4 and q8_KV, with their interleaved forms.
package legacy

import (
	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Kernels returns the kernels this package implements, for options o.
func Kernels(o kernel.Options) kernel.Set {
	search := o.Search()
	return kernel.Set{
		formats.F16:       quantizeF16,
		formats.BF16:      quantizeBF16,
		formats.BF16_R16:  quantizeBF16R16,
		formats.Q4_0:      quantizeQ4_0(o),
		formats.Q4_1:      quantizeQ4_1(search),
		formats.Q5_0:      quantizeQ5_0(search),
		formats.Q5_1:      quantizeQ5_1(search),
		formats.Q6_0:      quantizeQ6_0(search),
		formats.Q8_0:      quantizeQ8_0,
		formats.Q8_KV:     quantizeQ8KV,
		formats.Q8_KV_R8:  quantizeQ8KVR8,
		formats.Q8_K_R8:   quantizeQ8KR8,
		formats.MXFP4:     quantizeMXFP4,
		formats.Q1_0_G128: quantizeQ1_0G128,
		formats.Q4_0_R8:   interleaved(formats.Q4_0_R8, perRowWeighted(quantizeQ4_0Asymmetric(search))),
		formats.Q5_0_R4:   interleaved(formats.Q5_0_R4, quantizeQ5_0(search)),
		formats.Q6_0_R4:   interleaved(formats.Q6_0_R4, perRowWeighted(quantizeQ6_0(search))),
		formats.Q8_0_R8:   interleaved(formats.Q8_0_R8, quantizeQ8_0),
		formats.MXFP4_R8:  interleaved(formats.MXFP4_R8, quantizeMXFP4),
		formats.Q4_0_4X4:  interleaved(formats.Q4_0_4X4, quantizeQ4_0Plain),
		formats.Q4_0_4X8:  interleaved(formats.Q4_0_4X8, quantizeQ4_0Plain),
		formats.Q4_0_8X8:  interleaved(formats.Q4_0_8X8, quantizeQ4_0Plain),
	}
}
