//go:build !amd64 || purego

package iqk

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useIQ2KLSumsFMA = false

func iq2klSumsAsm(xb, weight []float32, id float32, idx *[16]int32) (sumqx, sumq2 float32, ok bool) {
	return 0, 0, false
}

func iq2klScore(xb, weight []float32, idx *[16]int32, dl float32) float32 {
	return 0
}

var useIQ2KLLanes = false

func iq2klLaneSums(xb, weight []float32, ids *[2 * iq2klTrials]float32, amax float32, sums *[2][2 * iq2klTrials]float32) bool {
	return false
}
