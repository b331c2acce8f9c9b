//go:build !amd64

package trellis

// useAVX2 is false off amd64: the portable searches run.
var useAVX2 = false

func nearest8AVX2(lanes *byte, nblock int, vx, w *[8]float32, best *[8]float32, index *[8]int32) {
	panic("trellis: no assembly search on this architecture")
}

func nearest4AVX2(lanes *byte, nblock int, vx, w *[4]float32, best *[8]float32, index *[8]int32) {
	panic("trellis: no assembly search on this architecture")
}

func scaleSumsAVX2(q, x, w *[32]float32, sums *[16]float32) {
	panic("trellis: no assembly on this architecture")
}

func fitTrialsAVX2(wx, w, v, dls *float32, nblock int, out *[2 * fitLanes]float32) {
	panic("trellis: fitTrialsAVX2 without AVX2")
}

func fitTrialsMulAddAVX2(wx, w, v, dls *float32, nblock int, out *[2 * fitLanes]float32) {
	panic("trellis: fitTrialsMulAddAVX2 without AVX2")
}

func searchBlock4AVX2(lanes *byte, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, values *float32, sums *[16]float32) int {
	panic("trellis: no assembly search on this architecture")
}

func searchBlock8AVX2(lanes *byte, spans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int {
	panic("trellis: no assembly search on this architecture")
}
