//go:build !amd64 || purego

package iquant

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

func levelsAVX2(L *int8, id float32, x *float32, n, maxL int) {}

func sumsOddFMA(weight, xval *float32, L *int8, n int) (sumqx, sumq2 float32) {
	return
}

func sortRanksAVX2(x *float32, n int, idx *int) {}

func sumsOddTrialsAVX2(weight, xval *float32, rows, cols *[32][32]int8, sums *[64]float32) {}

func levelsIQ2STrialAVX2(L *int8, id float32, x *float32, n, maxL int) {}

func sortRanks512(x *float32, n int, idx *int) {}

func prefixFMA(x, w *float32, idx *int, n int, sumx, sumw *float32) {}
