//go:build amd64 && !purego

package legacy

import "github.com/gquant/gquant/internal/cpu"

// useAVX2 selects the assembly q8 kernels; tests clear it to check the
// portable code on the same machine.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasF16C

// useAVX512 selects, where useAVX2 holds too, the AVX-512 kernels; tests
// clear it to check the AVX2 ones on the same machine.
var useAVX512 = cpu.X86.HasAVX512

// r16Lag is how many blocks of 16 columns the bf16_r16 kernels run rows 8-15
// behind rows 0-7 (see LAGGED_HALVES in q8_amd64.s). BenchmarkBF16R16Lags
// times the lags against a copy: 8 was the best on the AMD EPYC (Zen 5), 4
// on an Intel Xeon (Sapphire Rapids class; its L1D also has 12 ways), where
// it ran 0.88x of the copy at AVX-512 against 0.83x with 8.
var r16Lag = map[bool]int{false: 8, true: 4}[cpu.X86.Intel]

//go:noescape
func absMaxAVX2(x *float32, n int) float32

//go:noescape
func quantizeQ8AVX2(dst *byte, src *float32, n int, mul float32) int32

//go:noescape
func quantizeQ8Rows8AVX2(dst *byte, src *float32, stride, n int, muls *[8]float32)

//go:noescape
func quantizeQ8_0AVX2(dst *byte, src *float32, nb int) (maxBits, zeroScales uint32)

//go:noescape
func bf16R16Rows16AVX2(dst *byte, src *float32, stride, n, lag int) uint32

//go:noescape
func bf16R16Rows16AVX512(dst *byte, src *float32, stride, n, lag int) uint32

// absMaxSIMD returns absMax(x) and true when x has a multiple of 32 values
// and the CPU has AVX2 (the maximum of finite values does not depend on the
// order in which it is taken). If x holds an infinity or NaN the result is
// one too (not necessarily the one absMax returns).
func absMaxSIMD(x []float32) (float32, bool) {
	if !useAVX2 || len(x) == 0 || len(x)%32 != 0 {
		return 0, false
	}
	return absMaxAVX2(&x[0], len(x)), true
}

// quantizeQ8SIMD stores cvtRoundSat(float32(mul*v)) for every v of x in q
// and returns the sum of the int32 values, when x has a multiple of 32 values
// and the CPU has AVX2; otherwise it returns false and does nothing.
func quantizeQ8SIMD(q []byte, x []float32, mul float32) (int32, bool) {
	if !useAVX2 || len(x) == 0 || len(x)%32 != 0 || len(q) < len(x) {
		return 0, false
	}
	return quantizeQ8AVX2(&q[0], &x[0], len(x), mul), true
}

// quantizeQ8Rows8SIMD is quantizeQ8SIMD for 8 rows at once (row k is
// x[k*stride : k*stride+n], multiplied by muls[k]), storing the quants of
// values 4j..4j+3 of row k as one word at q[32*j+4*k:] (the q8_KV_r8 and
// q8_k_r8 layouts), for n a multiple of 32 and a CPU with AVX2; otherwise it
// returns false and does nothing.
func quantizeQ8Rows8SIMD(q []byte, x []float32, stride, n int, muls *[8]float32) bool {
	if !useAVX2 || n == 0 || n%32 != 0 || len(q) < 8*n || len(x) < 7*stride+n {
		return false
	}
	quantizeQ8Rows8AVX2(&q[0], &x[0], stride, n, muls)
	return true
}

// quantizeQ8_0SIMD quantizes the whole q8_0 blocks of x into dst with AVX2
// and returns how many it did (0 without AVX2), the largest magnitude bit
// pattern among their values, and whether a block's scale is not a normal
// float (it underflows to a zero half): those blocks are left to the
// caller.
func quantizeQ8_0SIMD(dst []byte, x []float32) (n int, maxBits uint32, zeroScales bool) {
	nb := min(len(x)/qk, len(dst)/blockQ8_0)
	if !useAVX2 || nb == 0 {
		return 0, 0, false
	}
	maxBits, zeros := quantizeQ8_0AVX2(&dst[0], &x[0], nb)
	return nb, maxBits, zeros > 0
}

// bf16R16Rows16SIMD stores a bf16_r16 group of 16 rows (row k's values
// x[k*stride : k*stride+n] truncated to bf16, its pair of columns 2j, 2j+1
// as the word at y[64*j+4*k:]) with AVX2 and returns the largest magnitude
// bit pattern read and true, when n is a multiple of 16; otherwise it
// returns false. On the AMD EPYC (Zen 5) the AVX-512 kernel runs at 0.93x
// of BenchmarkFloatVsCopy's copy and the AVX2 one at 0.91x (see r16Lag).
func bf16R16Rows16SIMD(y []byte, x []float32, stride, n int) (uint32, bool) {
	if !useAVX2 || n == 0 || n%16 != 0 || len(y) < 32*n || len(x) < 15*stride+n {
		return 0, false
	}
	if useAVX512 {
		return bf16R16Rows16AVX512(&y[0], &x[0], stride, n, r16Lag), true
	}
	return bf16R16Rows16AVX2(&y[0], &x[0], stride, n, r16Lag), true
}

//go:noescape
func quantizeQ8KVRowAVX2(dst *byte, src, next *float32, n int, mul float32) int32

// quantizeQ8KVRowSIMD stores the quants of x (multiplied by mul, rounded half
// to even) in q and returns their sum and true, when x has a multiple of 32
// values, next at least as many and the CPU has AVX2; otherwise it returns
// false and does nothing. It prefetches the first half of next (the row the
// caller quantizes next). mul must keep every |mul*v| below 127.5 (a scale
// amax/127 that is a normal float): the kernel sums the quants after
// saturating them to int16.
func quantizeQ8KVRowSIMD(q []byte, x, next []float32, mul float32) (int32, bool) {
	if !useAVX2 || len(x) == 0 || len(x)%32 != 0 || len(next) < len(x) || len(q) < len(x) {
		return 0, false
	}
	return quantizeQ8KVRowAVX2(&q[0], &x[0], &next[0], len(x), mul), true
}

//go:noescape
func quantizeQ8KVBF16AVX2(dst, src, next *byte, n int, mul float32) int32

//go:noescape
func quantizeQ8KVBF16AVX512(dst, src, next *byte, n int, mul float32) int32

// quantizeQ8KVBF16SIMD quantizes the longest prefix of the bfloat16 values
// in src that is a multiple of 32 (and fits q and next) as
// quantizeQ8KVBF16Go does, and returns its length (0 without AVX2) and the
// sum of its quants. The stored quants are cvtRoundSat's for every mul; the
// sum is right only while every |mul*v| stays below 127.5 (the AVX2 kernel
// sums them as saturated int16). While it works it prefetches as many bytes
// of next as it reads of src.
func quantizeQ8KVBF16SIMD(q, src, next []byte, mul float32) (int, int32) {
	n := min(len(src)/2, len(q), len(next)/2) &^ 31
	if !useAVX2 || n == 0 {
		return 0, 0
	}
	if useAVX512 {
		return n, quantizeQ8KVBF16AVX512(&q[0], &src[0], &next[0], n, mul)
	}
	return n, quantizeQ8KVBF16AVX2(&q[0], &src[0], &next[0], n, mul)
}

//go:noescape
func quantizeQ8Rows8BF16AVX2(dst, src *byte, stride, n int, muls *[8]float32)

// quantizeQ8Rows8BF16SIMD is quantizeQ8Rows8SIMD on little-endian bfloat16
// rows (row k is src[2*k*stride : 2*(k*stride+n)]), widened in the
// registers.
func quantizeQ8Rows8BF16SIMD(q, src []byte, stride, n int, muls *[8]float32) bool {
	if !useAVX2 || n == 0 || n%32 != 0 || len(q) < 8*n || len(src) < 2*(7*stride+n) {
		return false
	}
	quantizeQ8Rows8BF16AVX2(&q[0], &src[0], stride, n, muls)
	return true
}
