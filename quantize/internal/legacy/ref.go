package legacy

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Block sizes in bytes of the legacy 32-weight types.
const (
	blockQ4_0 = 18 // fp16 d, 16 bytes of nibbles
	blockQ4_1 = 20 // fp16 d, fp16 m, 16 bytes of nibbles
	blockQ5_0 = 22 // fp16 d, 4 bytes of high bits, 16 bytes of nibbles
	blockQ5_1 = 24 // fp16 d, fp16 m, 4 bytes of high bits, 16 bytes of nibbles
	blockQ6_0 = 26 // fp16 d, 8 bytes of high bit pairs, 16 bytes of nibbles
)

// truncInt is C's float -> integer conversion: it drops the fraction.
// GCC's x86 code for a conversion to int8_t/uint8_t converts to int32 with
// truncation and keeps the low byte, which byte(truncInt(v)) reproduces.
func truncInt(v float32) int32 { return int32(v) }

// The *Ref functions below are the reference's quantize_row_*_ref, used for
// the whole chunk when no importance matrix is given. GCC contracts
// `x0 = x*id; (int)(x0 + 0.5f)` into one fused multiply-add, and because the
// result is truncated the single rounding matters; hence FMA32. The
// assembly (ref_amd64.s) does the whole blocks where the CPU has AVX2.

// quantizeQ4_0Ref: scale = signed max / -8, quants truncate(x/d + 8.5), at most 15.
func quantizeQ4_0Ref(dst []byte, x []float32) {
	done := quantizeQ4_0RefSIMD(dst, x)
	quantizeQ4_0RefPortable(dst[done*blockQ4_0:], x[done*qk:])
}

// quantizeQ4_0RefPortable is quantizeQ4_0Ref in Go.
func quantizeQ4_0RefPortable(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : ib*qk+qk]
		y := dst[ib*blockQ4_0 : (ib+1)*blockQ4_0]
		max := signedAbsMax(xb)
		d := max / -8
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

// quantizeQ4_1Ref: scale (max-min)/15, offset min, quants truncate((x-min)/d + 0.5).
func quantizeQ4_1Ref(dst []byte, x []float32) {
	done := quantizeQ4_1RefSIMD(dst, x)
	quantizeQ4_1RefPortable(dst[done*blockQ4_1:], x[done*qk:])
}

// quantizeQ4_1RefPortable is quantizeQ4_1Ref in Go.
func quantizeQ4_1RefPortable(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : ib*qk+qk]
		y := dst[ib*blockQ4_1 : (ib+1)*blockQ4_1]
		lo, hi := minMax(xb)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		binary.LittleEndian.PutUint16(y[2:], formats.FP32ToFP16(lo))
		for j := 0; j < qk/2; j++ {
			xi0 := min(15, int8(truncInt(kernel.FMA32(xb[j]-lo, id, 0.5))))
			xi1 := min(15, int8(truncInt(kernel.FMA32(xb[j+qk/2]-lo, id, 0.5))))
			y[4+j] = byte(xi0) | byte(xi1)<<4
		}
	}
}

// quantizeQ5_0Ref: scale = signed max / -16, quants truncate(x/d + 16.5), at most 31.
func quantizeQ5_0Ref(dst []byte, x []float32) {
	done := quantizeQ5_0RefSIMD(dst, x)
	quantizeQ5_0RefPortable(dst[done*blockQ5_0:], x[done*qk:])
}

// quantizeQ5_0RefPortable is quantizeQ5_0Ref in Go.
func quantizeQ5_0RefPortable(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : ib*qk+qk]
		y := dst[ib*blockQ5_0 : (ib+1)*blockQ5_0]
		max := signedAbsMax(xb)
		d := max / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		var qh uint32
		for j := 0; j < qk/2; j++ {
			xi0 := byte(min(31, int8(truncInt(kernel.FMA32(xb[j], id, 16.5)))))
			xi1 := byte(min(31, int8(truncInt(kernel.FMA32(xb[j+qk/2], id, 16.5)))))
			y[6+j] = xi0&0x0f | (xi1&0x0f)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + qk/2)
		}
		binary.LittleEndian.PutUint32(y[2:], qh)
	}
}

// quantizeQ5_1Ref: scale (max-min)/31, offset min, quants truncate((x-min)/d + 0.5).
func quantizeQ5_1Ref(dst []byte, x []float32) {
	done := quantizeQ5_1RefSIMD(dst, x)
	quantizeQ5_1RefPortable(dst[done*blockQ5_1:], x[done*qk:])
}

// quantizeQ5_1RefPortable is quantizeQ5_1Ref in Go.
func quantizeQ5_1RefPortable(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : ib*qk+qk]
		y := dst[ib*blockQ5_1 : (ib+1)*blockQ5_1]
		lo, hi := minMax(xb)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		binary.LittleEndian.PutUint16(y[2:], formats.FP32ToFP16(lo))
		var qh uint32
		for j := 0; j < qk/2; j++ {
			xi0 := byte(truncInt(kernel.FMA32(xb[j]-lo, id, 0.5)))
			xi1 := byte(truncInt(kernel.FMA32(xb[j+qk/2]-lo, id, 0.5)))
			y[8+j] = xi0&0x0f | (xi1&0x0f)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + qk/2)
		}
		binary.LittleEndian.PutUint32(y[4:], qh)
	}
}

// signedAbsMax returns the first value of largest magnitude, with its sign.
func signedAbsMax(x []float32) float32 {
	var amax, max float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); amax < a {
			amax, max = a, v
		}
	}
	return max
}

// minMax returns the smallest and largest value of x.
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}
