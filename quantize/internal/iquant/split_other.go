//go:build !amd64 || purego

package iquant

const useSplitAVX2 = false

func iq2xsSplitSumsAVX2(sumx, sumw *float32, out *float32) {
	panic("iquant: iq2xsSplitSumsAVX2 without assembly")
}

func iq1sSplitSumsAVX2(sumx, sumw *float32, n int, vals *[6]float32, out *float32) {
	panic("iquant: iq1sSplitSumsAVX2 without assembly")
}

func iq1mSplitSumsAVX2(sx1, sx2, sw1, sw2 *float32, vals *[6][8]float32, out *float32) {
	panic("iquant: iq1mSplitSumsAVX2 without assembly")
}

func splitScanAVX2(out *float32, n, slots int, st *splitState) {
	panic("iquant: splitScanAVX2 without assembly")
}

func splitTopAVX2(out *float32, n, slots int, scores, chunkMax *float32, cand *[2 * splitTopMax]uint32) int {
	panic("iquant: splitTopAVX2 without assembly")
}
