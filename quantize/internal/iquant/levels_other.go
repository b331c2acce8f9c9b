//go:build !amd64 || purego

package iquant

func levelsAVX2(L *int8, id float32, x *float32, n, maxL int) {
	panic("iquant: levelsAVX2 without assembly")
}

func sumsOddFMA(weight, xval *float32, L *int8, n int) (sumqx, sumq2 float32) {
	panic("iquant: sumsOddFMA without assembly")
}

func levelsUnfusedAVX2(L *int8, id float32, x *float32, n, maxL int) {
	panic("iquant: levelsUnfusedAVX2 without assembly")
}

func sortRanksAVX2(x *float32, n int, idx *int) {
	panic("iquant: sortRanksAVX2 without assembly")
}

func sumsOddTrialsAVX2(weight, xval *float32, rows, cols *[32][32]int8, sums *[64]float32) {
	panic("iquant: sumsOddTrialsAVX2 without assembly")
}

func levelsIQ2STrialAVX2(L *int8, id float32, x *float32, n, maxL int) {
	panic("iquant: levelsIQ2STrialAVX2 without assembly")
}
