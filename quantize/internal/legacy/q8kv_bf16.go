package legacy

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/formats"
)

// QuantizeQ8KVBF16 quantizes the rows of ne0 little-endian bfloat16 values
// in src to q8_KV in dst, byte for byte as quantizeQ8KV does their float32
// widening, without float32 rows: a row's largest magnitude is the largest
// bit pattern v & 0x7fff (as the widening's), so one pass over the row finds
// its scale and a second, from L1, quantizes it. It stops at the first row
// with a pattern of limit or more and returns false, having written the rows
// before it; limit is at most 0x7f80 (infinity's), so every row it
// quantizes is finite. In a run of the medium model to q8_KV the widening
// was 11 % of the CPU time.
func QuantizeQ8KVBF16(dst, src []byte, ne0 int, limit uint16) bool {
	limit = min(limit, 0x7f80)
	in, rowSize := 2*ne0, 8+ne0
	nrows := len(src) / in
	var wide []float32 // a row whose scale is subnormal, widened
	for r := 0; r < nrows; r++ {
		x := src[r*in : (r+1)*in]
		y := dst[r*rowSize : (r+1)*rowSize]
		// The next row, prefetched into L1 while x is quantized, for its
		// maximum pass.
		next := x
		if r+1 < nrows {
			next = src[(r+1)*in : (r+2)*in]
		}
		m := formats.BF16MaxMagnitude(x)
		if m >= limit {
			return false
		}
		amax := formats.BF16ToFP32(m)
		d := amax / 127
		if amax == 0 || d < math.SmallestNonzeroFloat32*(1<<23) {
			// Zero rows and subnormal scales (whose products may leave
			// the int8 range) are quantizeQ8KVRow's, as in quantizeQ8KV.
			if wide == nil {
				wide = make([]float32, ne0)
			}
			formats.BF16RowToFP32(wide, x)
			quantizeQ8KVRow(y, wide)
			continue
		}
		isum := quantizeQ8KVBF16Row(y[8:], x, next, 1/d)
		binary.LittleEndian.PutUint32(y, math.Float32bits(d))
		binary.LittleEndian.PutUint32(y[4:], uint32(isum))
	}
	return true
}

// quantizeQ8KVBF16Row stores the quants of the bfloat16 values in src
// (widened, multiplied by mul, rounded half to even) in q and returns their
// sum, as quantizeQ8KVRow's normal-scale paths do: mul must keep every
// |mul*v| below 127.5. The assembly takes the longest prefix that is a
// multiple of 32 values (prefetching as many bytes of next, the row that
// comes next, as it goes), Go the rest.
func quantizeQ8KVBF16Row(q, src, next []byte, mul float32) int32 {
	n := len(src) / 2
	done, isum := quantizeQ8KVBF16SIMD(q[:n], src[:2*n], next, mul)
	return isum + quantizeQ8KVBF16Go(q[done:n], src[2*done:2*n], mul)
}

// quantizeQ8KVBF16Go is quantizeQ8KVBF16Row in Go, for len(q) values.
func quantizeQ8KVBF16Go(q, src []byte, mul float32) int32 {
	var isum int32
	for len(q) >= 4 && len(src) >= 8 {
		u := binary.LittleEndian.Uint64(src)
		l0 := roundEven(float32(mul * math.Float32frombits(uint32(u)<<16)))
		l1 := roundEven(float32(mul * math.Float32frombits(uint32(u>>16)<<16)))
		l2 := roundEven(float32(mul * math.Float32frombits(uint32(u>>32)<<16)))
		l3 := roundEven(float32(mul * math.Float32frombits(uint32(u>>48)<<16)))
		isum += l0 + l1 + l2 + l3
		binary.LittleEndian.PutUint32(q, uint32(uint8(l0))|uint32(uint8(l1))<<8|uint32(uint8(l2))<<16|uint32(uint8(l3))<<24)
		q, src = q[4:], src[8:]
	}
	for j := range q {
		l := roundEven(float32(mul * formats.BF16ToFP32(binary.LittleEndian.Uint16(src[2*j:]))))
		isum += l
		q[j] = byte(int8(l))
	}
	return isum
}

// QuantizeQ8KVR8BF16 is QuantizeQ8KVBF16 for q8_KV_r8, 8 rows at a time: the
// rows' scales from their largest bf16 magnitude patterns, then the 8 rows
// quantized into their interleaved layout with the widening in the
// registers (quantizeQ8Rows8BF16SIMD, which replays the reference's
// conversions for every multiplier, as quantizeQ8KVR8Direct's kernel:
// q8_KV_r8 keeps no row sums). Without the assembly (no AVX2, rows not a
// multiple of 32 values) each group of rows is widened and quantized the
// float32 way (quantizeQ8KVR8). nrows must be a multiple of 8.
func QuantizeQ8KVR8BF16(dst, src []byte, ne0 int, limit uint16) bool {
	const rows = 8
	limit = min(limit, 0x7f80)
	in, groupBytes := 2*ne0, rows*(4+ne0)
	var wide []float32 // a group of rows without the assembly, widened
	for g := 0; g < len(src)/(rows*in); g++ {
		x := src[g*rows*in : (g+1)*rows*in]
		y := dst[g*groupBytes : (g+1)*groupBytes]
		// An all-zero row gets scale 0 and multiplier 0, so zero quants.
		var muls [rows]float32
		for k := 0; k < rows; k++ {
			m := formats.BF16MaxMagnitude(x[k*in : (k+1)*in])
			if m >= limit {
				return false
			}
			var d float32
			if m != 0 {
				d = formats.BF16ToFP32(m) / 127
				muls[k] = 1 / d
			}
			binary.LittleEndian.PutUint32(y[4*k:], math.Float32bits(d))
		}
		if quantizeQ8Rows8BF16SIMD(y[4*rows:], x, ne0, ne0, &muls) {
			continue
		}
		if wide == nil {
			wide = make([]float32, rows*ne0)
		}
		formats.BF16RowToFP32(wide, x)
		if quantizeQ8KVR8(y, wide, rows, ne0, nil) != nil {
			return false // finite rows: not reached
		}
	}
	return true
}
