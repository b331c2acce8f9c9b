//go:build !amd64 || purego

package legacy

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

func quantizeMXFP4SIMD(dst []byte, x []float32) int { return 0 }
