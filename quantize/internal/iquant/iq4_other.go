//go:build !amd64 || purego

package iquant

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useIQ4SumsFMA = false

func iq4SumsFMA(weight, xb *float32, L *[32]uint8, values *[17]float32) (sumqx, sumq2 float32) {
	return
}

func iq4TrialsAVX2(xb, weight *float32, ids *[32]float32, tab *iq4TrialTables, sums *[64]float32) {}

func iq4DescentStepAVX2(xb, weight *float32, L *uint8, d float32, tab *iq4TrialTables) (j, dir int) {
	return
}
