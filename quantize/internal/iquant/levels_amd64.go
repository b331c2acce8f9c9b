//go:build amd64 && !purego

package iquant

// levelsAVX2 is levelsOf for n values, n a multiple of 8 (FMA and AVX2).
//
//go:noescape
func levelsAVX2(L *int8, id float32, x *float32, n, maxL int)

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

// sortRanks512 is sortRanksAVX2 for n = 16 or 32 with AVX-512 (sixteen
// ranks per vector, masked counts).
//
//go:noescape
func sortRanks512(x *float32, n int, idx *int)

// prefixFMA writes the prefix sums of the iq1_s block search over the order
// idx (n values): sumx[0] = sumw[0] = 0, sumx[j+1] = fma(w[i], x[i], sumx[j])
// and sumw[j+1] = sumw[j] + w[i] with i = idx[j] (scalar FMA).
//
//go:noescape
func prefixFMA(x, w *float32, idx *int, n int, sumx, sumw *float32)
