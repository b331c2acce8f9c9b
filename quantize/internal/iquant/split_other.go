//go:build !amd64 || purego

package iquant

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useSplitAVX2 = false

var useAVX512 = false

func iq2xsSplitSumsAVX2(sumx, sumw *float32, out *float32) {}

func iq1sSplitSumsAVX2(sumx, sumw *float32, n int, vals *[6]float32, out *float32) {}

func iq1mSplitSumsAVX2(sx1, sx2, sw1, sw2 *float32, vals *[6][8]float32, out *float32) {}

func splitScanAVX2(out *float32, n, slots int, st *splitState) {}

func splitTopAVX2(out *float32, n, slots int, scores, chunkMax *float32, cand *[2 * splitTopMax]uint32) int {
	return 0
}

func iq1sSplitTop512(sumx, sumw *float32, vals *[6]float32, scores *float32, cand *[2 * splitTop512Max]uint64) int {
	return 0
}

func iq1mSplitTop512(sx1, sx2, sw1, sw2 *float32, vals *[6]float32, idx *[iq1mTop512Vecs][32]int32, scores *float32, cand *[2 * splitTop512Max]uint64) int {
	return 0
}
