//go:build !amd64 || purego

package iqk

const useTrialsAVX2 = false

func (g *nlGrid) runTrials(xb, weight []float32, ids *[2][4][8]float32, nvecP, nvecS int, sums *trialSums) {
	panic("iqk: lane trials without AVX2")
}
