//go:build !amd64 || purego

package trellis

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

// useAVX2 is false off amd64 and with purego: the portable searches run.
var useAVX2 = false

// useBlockAVX512 is false: no assembly.
var useBlockAVX512 = false

func nearest8AVX2(lanes *byte, nblock int, vx, w *[8]float32, best *[8]float32, index *[8]int32) {}

func nearest4AVX2(lanes *byte, nblock int, vx, w *[4]float32, best *[8]float32, index *[8]int32) {}

func scaleSumsAVX2(q, x, w *[32]float32, sums *[16]float32) {}

func fitTrialsAVX2(wx, w, v, dls *float32, nblock int, out *[2 * fitLanes]float32) {}

func fitTrialsMulAddAVX2(wx, w, v, dls *float32, nblock int, out *[2 * fitLanes]float32) {}

func searchBlock4AVX2(lanes *byte, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, values *float32, sums *[16]float32) int {
	return 0
}

func searchBlock8AVX2(lanes *byte, spans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int {
	return 0
}

func searchPruned8AVX2(runs, boxes *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int {
	return 0
}

func searchPruned4AVX2(pairs, boxes *byte, ids, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, sums *[16]float32) int {
	return 1
}

func searchPruned4AVX512(pairs, boxes *byte, ids, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, sums *[16]float32) int {
	return 1
}

func searchPruned8AVX512(pairs, boxes *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int {
	return 1
}

func searchBlock8x2AVX512(lanes *byte, spans *uint32, mid *[8]float32, id1, id2 float32, x, w *[32]float32, idx1, idx2 *[4]int32, values *float32, sums1, sums2 *[16]float32) int {
	return 1
}

func searchFiltered8x2AVX512(pairs *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id1, id2 float32, x, w *[32]float32, idx1, idx2 *[4]int32, values *float32, sums1, sums2 *[16]float32) int {
	return 1
}

func searchBlock4AVX512(lanes *byte, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, values *float32, sums *[16]float32) int {
	return 0
}

func searchBlock8AVX512(lanes *byte, spans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int {
	return 0
}

func sumSquaresAVX2(x *float32, n int) float32 { return 0 }

func weightsBlockAVX2(x, qw, w *float32, sigma2 float32) (sumwx, sumw2, sumx2 float32) {
	return 0, 0, 0
}

func weightsBlockRoundedAVX2(x, qw, w *float32, sigma2 float32) (sumwx, sumw2, sumx2 float32) {
	return 0, 0, 0
}
