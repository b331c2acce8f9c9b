package legacy

import (
	"encoding/binary"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// quantizeQ4_0Symmetric is the reference's quantize_row_q4_0_symmetric:
// scale = |max| / 7, quants truncate(x/d + 8.5), at most 15; the product and
// the 8.5 are one fused multiply-add in the reference build.
func quantizeQ4_0Symmetric(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : ib*qk+qk]
		y := dst[ib*blockQ4_0 : (ib+1)*blockQ4_0]
		var amax float32
		for _, v := range xb {
			amax = max(amax, kernel.Abs32(v))
		}
		d := amax / 7
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		for j := 0; j < qk/2; j++ {
			xi0 := min(15, int8(truncInt(kernel.FMA32(xb[j], id, 8.5))))
			xi1 := min(15, int8(truncInt(kernel.FMA32(xb[j+qk/2], id, 8.5))))
			y[2+j] = byte(xi0) | byte(xi1)<<4
		}
	}
}
