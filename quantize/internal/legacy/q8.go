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
// AVX2 q8 quantizers does: adding 1.5*2^23 leaves the rounded value in the
// low mantissa bits. Valid for |v| < 2^22 (the q8 quantizers stay within
// ±127.5).
func roundEven(v float32) int32 {
	return int32(math.Float32bits(v+12582912)&0x7fffff) - 0x400000
}

// roundAway rounds half away from zero, as C's roundf does: float64 holds
// v ± 0.5 exactly, and the conversion truncates. Valid for |v| < 2^31.
func roundAway(v float32) int32 {
	half := math.Float64frombits(0x3fe0000000000000 | uint64(math.Float32bits(v)>>31)<<63)
	return int32(float64(v) + half)
}

// cvtRoundSat is what the reference's AVX2 q8 quantizers do with a product
// whatever its range: _mm256_round_ps to nearest even, _mm256_cvtps_epi32
// (0x80000000 for NaN and out-of-range values) and the saturating packs to
// int8. It returns the int32 (which the row sums add) and the stored byte.
// The fast paths use roundEven where the products are known to stay within
// ±127.5; this handles the rows and blocks whose scale underflows.
func cvtRoundSat(v float32) (int32, byte) {
	i := int32(math.MinInt32)
	if abs32(v) < 1<<31 {
		i = int32(math.RoundToEven(float64(v)))
	}
	return i, byte(int8(min(max(i, -128), 127)))
}

// abs32 is fabsf.
func abs32(v float32) float32 {
	return math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
}

// absMax returns the largest magnitude in x (0 for an empty slice).
func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	return amax
}

// absMax32 is absMax of one 32-weight block. It takes the largest bit
// pattern bits & 0x7fffffff, four running maxima at a time: for finite
// values that is the largest magnitude (and an integer max compiles to
// branch-free code, unlike a float max), and an infinity or NaN anywhere
// makes the result an infinity or NaN.
func absMax32(x *[qk]float32) float32 {
	var m0, m1, m2, m3 uint32
	for j := 0; j < qk; j += 4 {
		m0 = max(m0, math.Float32bits(x[j])&0x7fffffff)
		m1 = max(m1, math.Float32bits(x[j+1])&0x7fffffff)
		m2 = max(m2, math.Float32bits(x[j+2])&0x7fffffff)
		m3 = max(m3, math.Float32bits(x[j+3])&0x7fffffff)
	}
	return math.Float32frombits(max(max(m0, m1), max(m2, m3)))
}

// quantizeQ8_0Blocks is quantize_row_q8_0_ref over any number of whole
// blocks: scale amax/127, weights multiplied by 1/scale (rounded to float32)
// and rounded half away from zero. The reference ignores the importance
// matrix for q8_0. It returns the largest magnitude bit pattern among the
// values (finiteBits tells whether they are all finite).
func quantizeQ8_0Blocks(dst []byte, x []float32) uint32 {
	nb := min(len(x)/qk, len(dst)/blockQ8_0)
	done, m, zeros := quantizeQ8_0SIMD(dst, x)
	if zeros {
		// The assembly is exact only for normal scales; a block with a
		// smaller one (its half scale is 0) is redone here.
		for ib := 0; ib < done; ib++ {
			if binary.LittleEndian.Uint16(dst[ib*blockQ8_0:]) == 0 {
				quantizeQ8_0Portable(dst[ib*blockQ8_0:(ib+1)*blockQ8_0], x[ib*qk:(ib+1)*qk])
			}
		}
	}
	dst, x = dst[done*blockQ8_0:], x[done*qk:]
	return max(m, quantizeQ8_0Portable(dst, x[:(nb-done)*qk]))
}

// quantizeQ8_0Portable is quantizeQ8_0Blocks in Go.
func quantizeQ8_0Portable(dst []byte, x []float32) uint32 {
	nb := min(len(x)/qk, len(dst)/blockQ8_0)
	var m uint32
	for ib := 0; ib < nb; ib++ {
		xb := (*[qk]float32)(x[ib*qk:])
		y := (*[blockQ8_0]byte)(dst[ib*blockQ8_0:])
		amax := absMax32(xb)
		m = max(m, math.Float32bits(amax))
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y[:], formats.FP32ToFP16(d))
		qs := (*[qk]byte)(y[2:])
		for j := 0; j < qk; j += 4 {
			q0 := uint32(uint8(roundAway(float32(xb[j] * id))))
			q1 := uint32(uint8(roundAway(float32(xb[j+1] * id))))
			q2 := uint32(uint8(roundAway(float32(xb[j+2] * id))))
			q3 := uint32(uint8(roundAway(float32(xb[j+3] * id))))
			binary.LittleEndian.PutUint32(qs[j:], q0|q1<<8|q2<<16|q3<<24)
		}
	}
	return m
}

func quantizeQ8_0(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	if !finiteBits(quantizeQ8_0Blocks(dst, src)) {
		return ErrNotFinite
	}
	return nil
}

// quantizeQ8KVRow is the reference's AVX2 iqk_quantize_row_q8_KV: one float32
// scale (amax/127) and the int32 sum of the quants head the row, then one
// int8 per weight, rounded half to even after multiplying by 1/scale. It
// returns false, writing nothing, if x holds an infinity or NaN.
func quantizeQ8KVRow(dst []byte, x []float32) bool {
	dst = dst[:8+len(x)]
	amax, ok := absMaxSIMD(x)
	if !ok {
		amax = absMax(x)
	}
	if !finite(amax) {
		return false
	}
	if amax == 0 {
		clear(dst)
		return true
	}
	d := amax / 127
	mul := 1 / d
	q := dst[8:]
	isum, ok := quantizeQ8SIMD(q, x, mul)
	switch {
	case ok:
	case d < math.SmallestNonzeroFloat32*(1<<23):
		// A subnormal (or zero) scale: 1/d is inexact or infinite and the
		// products may leave the int8 range.
		for j, v := range x {
			l, b := cvtRoundSat(float32(mul * v))
			isum += l
			q[j] = b
		}
	default:
		for len(x) >= 4 && len(q) >= 4 {
			l0 := roundEven(float32(mul * x[0]))
			l1 := roundEven(float32(mul * x[1]))
			l2 := roundEven(float32(mul * x[2]))
			l3 := roundEven(float32(mul * x[3]))
			isum += l0 + l1 + l2 + l3
			binary.LittleEndian.PutUint32(q, uint32(uint8(l0))|uint32(uint8(l1))<<8|uint32(uint8(l2))<<16|uint32(uint8(l3))<<24)
			x, q = x[4:], q[4:]
		}
		for j, v := range x {
			l := roundEven(float32(mul * v))
			isum += l
			q[j] = byte(int8(l))
		}
	}
	binary.LittleEndian.PutUint32(dst, math.Float32bits(d))
	binary.LittleEndian.PutUint32(dst[4:], uint32(isum))
	return true
}

func quantizeQ8KV(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	if done, err := quantizeQ8KVRows(dst, src, nrows, ne0); done {
		return err
	}
	rowSize := 8 + ne0
	for r := 0; r < nrows; r++ {
		if !quantizeQ8KVRow(dst[r*rowSize:], src[r*ne0:(r+1)*ne0]) {
			return ErrNotFinite
		}
	}
	return nil
}

// quantizeQ8KVR8 quantizes 8 rows as q8_KV, then stores their 8 scales first
// and the quants as 4-byte words, word l of rows 0..7 next to each other for
// every 16 columns (repack_q8_KV). The row sums are dropped.
func quantizeQ8KVR8(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	const rows = 8
	baseRow := 8 + ne0
	var tmp []byte // only where the assembly does not apply
	groupBytes := rows * (4 + ne0)
	for g := 0; g < nrows/rows; g++ {
		y := dst[g*groupBytes : (g+1)*groupBytes]
		if done, finite := quantizeQ8KVR8Direct(y, src[g*rows*ne0:(g+1)*rows*ne0], ne0); done {
			if !finite {
				return ErrNotFinite
			}
			continue
		}
		if tmp == nil {
			tmp = make([]byte, rows*baseRow)
		}
		for k := 0; k < rows; k++ {
			r := g*rows + k
			if !quantizeQ8KVRow(tmp[k*baseRow:], src[r*ne0:(r+1)*ne0]) {
				return ErrNotFinite
			}
		}
		for k := 0; k < rows; k++ {
			copy(y[4*k:4*k+4], tmp[k*baseRow:])
		}
		// Word l (4 quants) of each row's 16-column block ib goes to
		// qy[128*ib+32*l+4*k]: read one 4-byte word per row and block at a
		// time and write the 128 bytes of a block in order.
		qy := y[4*rows:]
		for ib := 0; ib < ne0/16 && len(qy) >= 128; ib++ {
			out := (*[128]byte)(qy)
			for k := 0; k < rows; k++ {
				in := (*[16]byte)(tmp[k*baseRow+8+16*ib:])
				for l := 0; l < 4; l++ {
					binary.LittleEndian.PutUint32(out[32*l+4*k:], binary.LittleEndian.Uint32(in[4*l:]))
				}
			}
			qy = qy[128:]
		}
	}
	return nil
}

// quantizeQ8KVR8Direct quantizes one group of 8 rows of q8_KV_r8 straight
// into its interleaved layout with the assembly kernels, when they apply
// (AVX2, rows of a multiple of 32 values); otherwise it returns false. Its
// second result is false if it stopped at an infinity or NaN.
func quantizeQ8KVR8Direct(y []byte, x []float32, ne0 int) (done, finiteInput bool) {
	const rows = 8
	if !useAVX2 || ne0%32 != 0 {
		return false, true
	}
	// An all-zero row gets scale 0 and multiplier 0, so zero quants.
	var muls [rows]float32
	for k := 0; k < rows; k++ {
		amax, _ := absMaxSIMD(x[k*ne0 : (k+1)*ne0])
		if !finite(amax) {
			return true, false
		}
		var d float32
		if amax != 0 {
			d = amax / 127
			muls[k] = 1 / d
		}
		binary.LittleEndian.PutUint32(y[4*k:], math.Float32bits(d))
	}
	quantizeQ8Rows8SIMD(y[4*rows:], x, ne0, ne0, &muls)
	return true, true
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
			y := (*[block]byte)(dst[(g*nblock+ibl)*block:])
			qs := y[2*rows:]
			if done, err := quantizeQ8KR8Block(y, src[g*rows*ne0+ibl*qk:], ne0); done {
				if err != nil {
					return err
				}
				continue
			}
			for k := 0; k < rows; k++ {
				r := g*rows + k
				x := (*[qk]float32)(src[r*ne0+ibl*qk:])
				amax, ok := absMaxSIMD(x[:])
				if !ok {
					amax = absMax(x[:])
				}
				if !finite(amax) {
					return ErrNotFinite
				}
				d := amax / 127
				var id float32
				if amax != 0 {
					id = 127 / amax
				}
				binary.LittleEndian.PutUint16(y[2*k:], formats.FP32ToFP16(d))
				if amax < 1.0/(1<<100) {
					// 127/amax may overflow: replay the reference's
					// conversions with their saturation.
					for j, v := range x {
						_, qs[32*(j/4)+4*k+j%4] = cvtRoundSat(float32(id * v))
					}
					continue
				}
				for ib := 0; ib < qk/4; ib++ {
					xi := (*[4]float32)(x[4*ib:])
					q0 := uint32(uint8(roundEven(float32(id * xi[0]))))
					q1 := uint32(uint8(roundEven(float32(id * xi[1]))))
					q2 := uint32(uint8(roundEven(float32(id * xi[2]))))
					q3 := uint32(uint8(roundEven(float32(id * xi[3]))))
					binary.LittleEndian.PutUint32(qs[32*ib+4*k:], q0|q1<<8|q2<<16|q3<<24)
				}
			}
		}
	}
	return nil
}

// quantizeQ8KR8Block is one 256-column block of 8 rows of quantizeQ8KR8 (row
// k's values at x[k*ne0:]) with the 8-row assembly kernel, when the CPU has
// AVX2; otherwise it returns false. The kernel replays the reference's
// conversions for every multiplier, so no scale needs the portable path.
func quantizeQ8KR8Block(y *[2*8 + 8*256]byte, x []float32, ne0 int) (bool, error) {
	const rows, qk = 8, 256
	if !useAVX2 {
		return false, nil
	}
	var ids [rows]float32
	for k := 0; k < rows; k++ {
		amax, _ := absMaxSIMD(x[k*ne0 : k*ne0+qk])
		if !finite(amax) {
			return true, ErrNotFinite
		}
		if amax != 0 {
			ids[k] = 127 / amax
		}
		binary.LittleEndian.PutUint16(y[2*k:], formats.FP32ToFP16(amax/127))
	}
	quantizeQ8Rows8SIMD(y[2*rows:], x, ne0, qk, &ids)
	return true, nil
}
