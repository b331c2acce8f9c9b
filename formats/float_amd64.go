//go:build amd64 && !purego

package formats

import "github.com/gquant/gquant/internal/cpu"

// useAVX2F16C selects the assembly conversions; tests clear it to check the
// portable code on the same machine.
var useAVX2F16C = cpu.X86.HasAVX2 && cpu.X86.HasF16C

// useAVX512 selects the 512-bit f16 and bf16 conversions (with
// useAVX2F16C); tests clear it to check the AVX2 ones on the same machine.
var useAVX512 = cpu.X86.HasAVX2 && cpu.X86.HasF16C && cpu.X86.HasAVX512

// intelKernels selects the conversions' variants for Intel cores (the
// memory form of VCVTPS2PH, the bf16 rounding bit by shift); tests set it
// both ways to check both on the same machine. formats'
// BenchmarkFloatKernels times every variant against a copy: on an Intel
// Xeon (Sapphire Rapids class), with the data in L2, medians of 5, the
// memory form ran f16 at 1.22x the copy against 1.15x for the register
// form (AVX-512) and 0.99x against 0.93x (AVX2), and the shift ran AVX2
// bf16 at 0.58x against 0.51x; on the AMD EPYC (Zen 5) the memory form
// ran AVX2 f16 at 0.82x against 1.03x, and VPMULLW AVX2 bf16 at 0.94x
// against 0.82x.
var intelKernels = cpu.X86.Intel

//go:noescape
func fp32ToFP16F16C(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToFP16F16CMem(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToBF16AVX2(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToFP16AVX512(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToFP16AVX512Mem(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToBF16AVX2Shift(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToBF16AVX512(dst *byte, src *float32, n int) uint32

// putFP16RowSIMD converts the longest prefix of src that is a multiple of 32
// values with F16C (in 512-bit vectors where the CPU has AVX-512) and
// returns its length (0 without F16C) and whether every value in it is
// certainly finite. When it is not, the prefix may hold an infinity or a
// NaN, or only have a large sum; its conversion is right either way.
// len(dst) must be at least 2*len(src).
func putFP16RowSIMD(dst []byte, src []float32) (int, bool) {
	n := len(src) &^ 31
	if !useAVX2F16C || n == 0 || len(dst) < 2*n {
		return 0, true
	}
	var sum uint32
	switch {
	case useAVX512 && intelKernels:
		sum = fp32ToFP16AVX512Mem(&dst[0], &src[0], n)
	case useAVX512:
		sum = fp32ToFP16AVX512(&dst[0], &src[0], n)
	case intelKernels:
		sum = fp32ToFP16F16CMem(&dst[0], &src[0], n)
	default:
		sum = fp32ToFP16F16C(&dst[0], &src[0], n)
	}
	return n, sum&nonFiniteBits != nonFiniteBits
}

// putBF16RowSIMD converts the longest prefix of src that is a multiple of 32
// values to bfloat16 with AVX2 (in 512-bit vectors where the CPU has
// AVX-512) and returns its length (0 without AVX2) and whether every value
// in it is certainly finite. When it is not, the prefix may hold an
// infinity or a NaN (or, with AVX2, only have a large sum) and its NaNs are
// converted wrongly: the caller checks the values one by one.
// len(dst) must be at least 2*len(src).
func putBF16RowSIMD(dst []byte, src []float32) (int, bool) {
	n := len(src) &^ 31
	if !useAVX2F16C || n == 0 || len(dst) < 2*n {
		return 0, true
	}
	var sum uint32
	switch {
	case useAVX512:
		sum = fp32ToBF16AVX512(&dst[0], &src[0], n)
	case intelKernels:
		sum = fp32ToBF16AVX2Shift(&dst[0], &src[0], n)
	default:
		sum = fp32ToBF16AVX2(&dst[0], &src[0], n)
	}
	return n, sum&nonFiniteBits != nonFiniteBits
}

//go:noescape
func bf16ToFP32AVX2(dst *float32, src *byte, n int)

// bf16RowToFP32SIMD widens the longest prefix of src (bfloat16 values) that
// is a multiple of 16 values with AVX2 and returns its length in values (0
// without AVX2).
func bf16RowToFP32SIMD(dst []float32, src []byte) int {
	n := min(len(src)/2, len(dst)) &^ 15
	if !useAVX2F16C || n == 0 {
		return 0
	}
	bf16ToFP32AVX2(&dst[0], &src[0], n)
	return n
}

//go:noescape
func bf16ToFP32MaxAVX2(dst *float32, src *byte, n int) uint16

// bf16RowToFP32MaxSIMD is bf16RowToFP32SIMD that also returns the largest
// magnitude bit pattern of the values it widened (0 without AVX2).
func bf16RowToFP32MaxSIMD(dst []float32, src []byte) (int, uint16) {
	n := min(len(src)/2, len(dst)) &^ 15
	if !useAVX2F16C || n == 0 {
		return 0, 0
	}
	return n, bf16ToFP32MaxAVX2(&dst[0], &src[0], n)
}

//go:noescape
func anyNonFiniteAVX2(x *float32, n int) bool

// anyNonFiniteSIMD checks the longest prefix of x that is a multiple of 32
// values with AVX2 and returns its length and whether it holds an infinity
// or NaN (0, false without AVX2).
func anyNonFiniteSIMD(x []float32) (int, bool) {
	n := len(x) &^ 31
	if !useAVX2F16C || n == 0 {
		return 0, false
	}
	return n, anyNonFiniteAVX2(&x[0], n)
}

//go:noescape
func maxBitsAVX2(x *float32, n int) uint32

// maxBitsSIMD returns the length of the longest prefix of x that is a
// multiple of 32 values and the largest bit pattern in it, with AVX2 (0, 0
// without).
func maxBitsSIMD(x []float32) (int, uint32) {
	n := len(x) &^ 31
	if !useAVX2F16C || n == 0 {
		return 0, 0
	}
	return n, maxBitsAVX2(&x[0], n)
}

//go:noescape
func bf16ToFP16MaxAVX2(dst, src *byte, n int) uint16

//go:noescape
func bf16ToFP16MaxAVX512(dst, src *byte, n int) uint16

// bf16RowToFP16MaxSIMD converts the longest prefix of src (bfloat16 values)
// that is a multiple of 32 values to halves in dst with F16C (in 512-bit
// vectors where the CPU has AVX-512) and returns its length in values (0
// without F16C) and the largest magnitude bit pattern among them.
func bf16RowToFP16MaxSIMD(dst, src []byte) (int, uint16) {
	n := min(len(src), len(dst)) / 2 &^ 31
	if !useAVX2F16C || n == 0 {
		return 0, 0
	}
	if useAVX512 {
		return n, bf16ToFP16MaxAVX512(&dst[0], &src[0], n)
	}
	return n, bf16ToFP16MaxAVX2(&dst[0], &src[0], n)
}

//go:noescape
func bf16MaxAVX2(src *byte, n int) uint16

//go:noescape
func bf16MaxAVX512(src *byte, n int) uint16

// bf16MaxSIMD returns how many values of src (little-endian bfloat16) it
// looked at, the longest prefix that is a multiple of 32 (0 without AVX2),
// and their largest bit pattern v & 0x7fff, as bf16MaxGo does.
func bf16MaxSIMD(src []byte) (int, uint16) {
	n := len(src) / 2 &^ 31
	if !useAVX2F16C || n == 0 {
		return 0, 0
	}
	if useAVX512 {
		return n, bf16MaxAVX512(&src[0], n)
	}
	return n, bf16MaxAVX2(&src[0], n)
}
