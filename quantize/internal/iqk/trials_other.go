//go:build !amd64 || purego

package iqk

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useTrialsAVX2 = false

func (g *nlGrid) runTrials(xb, weight []float32, ids *[2][4][8]float32, nvecP, nvecS int, sums *trialSums) {
}
