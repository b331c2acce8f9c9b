package legacy

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/formats"
)

const (
	blockQ8_0 = 34 // fp16 scale + 32 int8
	qk        = 32 // weights per legacy block
)

// roundEven rounds to the nearest integer, ties to even, as the
// _mm256_round_ps(_MM_ROUND_NEAREST) + cvtps_epi32 pair of the reference's
// AVX2 q8 quantizers does. Valid for |v| < 2^22.
func roundEven(v float32) int32 {
	return int32(math.RoundToEven(float64(v)))
}

// absMax returns the largest magnitude in x (0 for an empty slice).
func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax = a
		}
	}
	return amax
}

// quantizeQ8_0Blocks is quantize_row_q8_0_ref over any number of whole
// blocks: scale amax/127, weights rounded half away from zero. The reference
// ignores the importance matrix for q8_0.
func quantizeQ8_0Blocks(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : ib*qk+qk]
		y := dst[ib*blockQ8_0 : ib*blockQ8_0+blockQ8_0]
		amax := absMax(xb)
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		qs := y[2:34]
		for j, v := range xb {
			qs[j] = byte(int8(math.Round(float64(v * id))))
		}
	}
}

func quantizeQ8_0(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	quantizeQ8_0Blocks(dst, src)
	return nil
}

// quantizeQ8KVRow is the reference's AVX2 iqk_quantize_row_q8_KV: one float32
// scale (amax/127) and the int32 sum of the quants head the row, then one
// int8 per weight, rounded half to even after multiplying by 1/scale.
func quantizeQ8KVRow(dst []byte, x []float32) {
	q := dst[8 : 8+len(x)]
	amax := absMax(x)
	if amax == 0 {
		clear(dst[:8+len(x)])
		return
	}
	d := amax / 127
	mul := 1 / d
	var isum int32
	for j, v := range x {
		l := roundEven(mul * v)
		isum += l
		q[j] = byte(int8(l))
	}
	binary.LittleEndian.PutUint32(dst, math.Float32bits(d))
	binary.LittleEndian.PutUint32(dst[4:], uint32(isum))
}

func quantizeQ8KV(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	rowSize := 8 + ne0
	for r := 0; r < nrows; r++ {
		quantizeQ8KVRow(dst[r*rowSize:], src[r*ne0:(r+1)*ne0])
	}
	return nil
}

// quantizeQ8KVR8 quantizes 8 rows as q8_KV, then stores their 8 scales first
// and the quants as 4-byte words, word l of rows 0..7 next to each other for
// every 16 columns (repack_q8_KV). The row sums are dropped.
func quantizeQ8KVR8(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	const rows = 8
	baseRow := 8 + ne0
	tmp := make([]byte, rows*baseRow)
	groupBytes := rows * (4 + ne0)
	for g := 0; g < nrows/rows; g++ {
		for k := 0; k < rows; k++ {
			r := g*rows + k
			quantizeQ8KVRow(tmp[k*baseRow:], src[r*ne0:(r+1)*ne0])
		}
		y := dst[g*groupBytes : (g+1)*groupBytes]
		for k := 0; k < rows; k++ {
			copy(y[4*k:4*k+4], tmp[k*baseRow:])
		}
		qy := y[4*rows:]
		for ib := 0; ib < ne0/16; ib++ {
			for l := 0; l < 4; l++ {
				for k := 0; k < rows; k++ {
					src := tmp[k*baseRow+8+16*ib+4*l:]
					copy(qy[128*ib+32*l+4*k:128*ib+32*l+4*k+4], src[:4])
				}
			}
		}
	}
	return nil
}

// quantizeQ8KR8 quantizes 8 rows the way the reference's AVX2
// quantize_row_q8_K32 does (per 256 weights: d = amax/127, quants rounded half
// to even after multiplying by 127/amax), keeps d as fp16, and interleaves the
// 8 rows in 4-byte groups (repack_q8_k).
func quantizeQ8KR8(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	const (
		rows  = 8
		qk    = 256
		block = 2*rows + rows*qk // 8 fp16 scales + 8 rows of 256 quants
	)
	nblock := ne0 / qk
	for g := 0; g < nrows/rows; g++ {
		for ibl := 0; ibl < nblock; ibl++ {
			y := dst[(g*nblock+ibl)*block : (g*nblock+ibl+1)*block]
			qs := y[2*rows:]
			for k := 0; k < rows; k++ {
				r := g*rows + k
				x := src[r*ne0+ibl*qk : r*ne0+ibl*qk+qk]
				amax := absMax(x)
				d := amax / 127
				var id float32
				if amax != 0 {
					id = 127 / amax
				}
				binary.LittleEndian.PutUint16(y[2*k:], formats.FP32ToFP16(d))
				for ib := 0; ib < qk/4; ib++ {
					for i := 0; i < 4; i++ {
						qs[32*ib+4*k+i] = byte(int8(roundEven(id * x[4*ib+i])))
					}
				}
			}
		}
	}
	return nil
}
