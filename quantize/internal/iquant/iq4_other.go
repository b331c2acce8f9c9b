//go:build !amd64 || purego

package iquant

const useIQ4SumsFMA = false

func iq4SumsFMA(weight, xb *float32, L *[32]uint8, values *[17]float32) (sumqx, sumq2 float32) {
	panic("iquant: iq4SumsFMA without FMA")
}

func iq4TrialsAVX2(xb, weight *float32, ids *[32]float32, tab *iq4TrialTables, sums *[64]float32) {
	panic("iquant: iq4TrialsAVX2 without AVX2")
}

func iq4DescentStepAVX2(xb, weight *float32, L *uint8, d float32, tab *iq4TrialTables) (j, dir int) {
	panic("iquant: iq4DescentStepAVX2 without AVX2")
}
