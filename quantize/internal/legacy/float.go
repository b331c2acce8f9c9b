package legacy

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/formats"
)

// quantizeF16 converts every weight to IEEE half precision, rounding to
// nearest even as the reference's F16C path does. The imatrix is ignored.
func quantizeF16(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	if !formats.PutFP16RowFinite(dst, src) {
		return ErrNotFinite
	}
	return nil
}

// quantizeBF16 converts every weight to bfloat16 with the reference's
// round-to-nearest-even conversion (ggml_fp32_to_bf16_row_ref).
func quantizeBF16(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	if !formats.PutBF16RowFinite(dst, src) {
		return ErrNotFinite
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
	var xk [rows][]float32
	for g := 0; g+group <= len(src); g += group {
		for k := range xk {
			xk[k] = src[g+k*ne0 : g+(k+1)*ne0]
		}
		y := dst[2*g : 2*(g+group)]
		if m, ok := bf16R16Rows16SIMD(y, src[g:], ne0, ne0); ok {
			if !finiteBits(m) {
				return ErrNotFinite
			}
			continue
		}
		// Each pair of columns fills 64 bytes: one 4-byte word per row.
		var m uint32
		for ib := 0; ib+1 < ne0 && len(y) >= 64; ib += 2 {
			out := (*[64]byte)(y)
			for k := range xk {
				x := xk[k][ib : ib+2 : ib+2]
				b0, b1 := math.Float32bits(x[0]), math.Float32bits(x[1])
				m = max(m, b0&0x7fffffff, b1&0x7fffffff)
				binary.LittleEndian.PutUint32(out[4*k:], b0>>16|b1&^0xffff)
			}
			y = y[64:]
		}
		if !finiteBits(m) {
			return ErrNotFinite
		}
	}
	return nil
}
