//go:build amd64 && !purego

package formats

import "github.com/gquant/gquant/internal/cpu"

// useAVX2F16C selects the assembly conversions; tests clear it to check the
// portable code on the same machine.
var useAVX2F16C = cpu.X86.HasAVX2 && cpu.X86.HasF16C

// useAVX512 selects the 512-bit f16 and bf16 conversions (with
// useAVX2F16C); tests clear it to check the AVX2 ones on the same machine.
var useAVX512 = cpu.X86.HasAVX2 && cpu.X86.HasF16C && cpu.X86.HasAVX512

//go:noescape
func fp32ToFP16F16C(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToBF16AVX2(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToFP16AVX512(dst *byte, src *float32, n int) uint32

//go:noescape
func fp32ToBF16AVX512(dst *byte, src *float32, n int) uint32

// putFP16RowSIMD converts the longest prefix of src that is a multiple of 32
// values with F16C (in 512-bit vectors where the CPU has AVX-512) and
// returns its length (0 without F16C) and the largest magnitude bit pattern
// in it (bits & 0x7fffffff). len(dst) must be at least 2*len(src).
func putFP16RowSIMD(dst []byte, src []float32) (int, uint32) {
	n := len(src) &^ 31
	if !useAVX2F16C || n == 0 || len(dst) < 2*n {
		return 0, 0
	}
	if useAVX512 {
		return n, fp32ToFP16AVX512(&dst[0], &src[0], n)
	}
	return n, fp32ToFP16F16C(&dst[0], &src[0], n)
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
	if useAVX512 {
		sum = fp32ToBF16AVX512(&dst[0], &src[0], n)
	} else {
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
