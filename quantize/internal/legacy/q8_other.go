//go:build !amd64 || purego

package legacy

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

// useAVX2 is false without assembly.
var useAVX2 = false

// useAVX512 is false: no assembly.
var useAVX512 = false

// r16Lag has no kernel to steer without assembly.
var r16Lag = 8

func absMaxSIMD(x []float32) (float32, bool) { return 0, false }

func quantizeQ8SIMD(q []byte, x []float32, mul float32) (int32, bool) { return 0, false }

func quantizeQ8Rows8SIMD(q []byte, x []float32, stride, n int, muls *[8]float32) bool {
	return false
}

func quantizeQ8_0SIMD(dst []byte, x []float32) (int, uint32, bool) { return 0, 0, false }

func bf16R16Rows16SIMD(y []byte, x []float32, stride, n int) (uint32, bool) { return 0, false }

func quantizeQ8KVRowSIMD(q []byte, x, next []float32, mul float32) (int32, bool) { return 0, false }

func quantizeQ4_0RefSIMD(dst []byte, x []float32) int { return 0 }

func quantizeQ4_1RefSIMD(dst []byte, x []float32) int { return 0 }

func quantizeQ5_0RefSIMD(dst []byte, x []float32) int { return 0 }

func quantizeQ5_1RefSIMD(dst []byte, x []float32) int { return 0 }

func quantizeQ8KVBF16SIMD(q, src, next []byte, mul float32) (int, int32) { return 0, 0 }

func quantizeQ8Rows8BF16SIMD(q, src []byte, stride, n int, muls *[8]float32) bool { return false }
