//go:build !amd64 || purego

package ternary

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

// useAVX2 is false off amd64 and with purego: the portable loops run.
var useAVX2 = false

func absMaxAVX2(src *float32, n int, lanes *[8]float32) {}

func tritsAVX2(src *float32, n int, thresh float32, dst *byte) {}
