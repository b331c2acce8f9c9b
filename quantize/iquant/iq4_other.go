//go:build !amd64 || purego

package iquant

const useIQ4SumsFMA = false

func iq4SumsFMA(weight, xb *float32, L *[32]uint8, values *[17]float32) (sumqx, sumq2 float32) {
	panic("iquant: iq4SumsFMA without FMA")
}

func iq4LevelsAVX2(xb *float32, id float32, out *[32]uint8, tab *iq4VecTables) {
	panic("iquant: iq4LevelsAVX2 without AVX2")
}
