package legacy

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/formats"
)

// quantizeF16 converts every weight to IEEE half precision, rounding to
// nearest even as the reference's F16C path does. The imatrix is ignored.
func quantizeF16(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], formats.FP32ToFP16(v))
	}
	return nil
}

// quantizeBF16 converts every weight to bfloat16 with the reference's
// round-to-nearest-even conversion (ggml_fp32_to_bf16_row_ref).
func quantizeBF16(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], formats.FP32ToBF16(v))
	}
	return nil
}

// quantizeBF16R16 stores 16 rows together, pairs of columns of each row next
// to each other. Unlike bf16, the reference builds it by truncating the
// float32 (keeping its high 16 bits), not by rounding, so it cannot be made
// from bf16 rows with formats.Interleave.
func quantizeBF16R16(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	const rows = 16
	group := rows * ne0
	for g := 0; g+group <= len(src); g += group {
		x := src[g : g+group]
		y := dst[2*g : 2*(g+group)]
		for k := 0; k < rows; k++ {
			xk := x[k*ne0 : (k+1)*ne0]
			for ib := 0; ib < ne0/2; ib++ {
				o := 2 * (32*ib + 2*k)
				lo := math.Float32bits(xk[2*ib]) >> 16
				hi := math.Float32bits(xk[2*ib+1]) >> 16
				binary.LittleEndian.PutUint32(y[o:], lo|hi<<16)
			}
		}
	}
	return nil
}
