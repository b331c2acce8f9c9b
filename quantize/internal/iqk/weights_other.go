//go:build !amd64 || purego

package iqk

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useWeightsAVX2 = false

func qxTrialsAVX2(x, qw *float32, n int, iscale *[24]float32, nmax float32, out *[2][24]float32) {}
