//go:build amd64 && !purego

package iquant

// levelsAVX2 is levelsOf for n values, n a multiple of 8 (FMA and AVX2).
//
//go:noescape
func levelsAVX2(L *int8, id float32, x *float32, n, maxL int)

// levelsUnfusedAVX2 is levelsOfUnfused for n values, n a multiple of 8.
//
//go:noescape
func levelsUnfusedAVX2(L *int8, id float32, x *float32, n, maxL int)

// levelsIQ2STrialAVX2 is levelsOfIQ2STrial for 16 values (n = 16).
//
//go:noescape
func levelsIQ2STrialAVX2(L *int8, id float32, x *float32, n, maxL int)

// sumsOddFMA is sumsOdd with scalar VFMADD231SS (correctly rounded).
//
//go:noescape
func sumsOddFMA(weight, xval *float32, L *int8, n int) (sumqx, sumq2 float32)

// sortRanksAVX2 writes the stable sorted order of n finite values (n a
// multiple of 8) by ranks: idx[#{x[j] < x[i]} + #{j < i, x[j] == x[i]}] = i.
//
//go:noescape
func sortRanksAVX2(x *float32, n int, idx *int)

// sumsOddTrialsAVX2 is sumsOdd for the 32 trials of a 32-value block at
// once, one trial per lane: rows[t] holds trial t's levels, cols is scratch
// (the levels transposed); sums[t] and sums[32+t] get sumqx and sumq2.
//
//go:noescape
func sumsOddTrialsAVX2(weight, xval *float32, rows, cols *[32][32]int8, sums *[64]float32)
