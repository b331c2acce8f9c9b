//go:build !amd64

package ternary

// useAVX2 is false off amd64: the portable loops run.
var useAVX2 = false

func absMaxAVX2(src *float32, n int, lanes *[8]float32) {
	panic("ternary: no assembly on this architecture")
}

func tritsAVX2(src *float32, n int, thresh float32, dst *byte) {
	panic("ternary: no assembly on this architecture")
}
