//go:build !amd64 || purego

package kernel

// useAVX2 is false here: the portable loops run.
var useAVX2 = false

func qxTrialSumsAVX2(scales *[qxLanes]float32, x, w, wx *float32, n int, lo, hi float32, sumlx, suml2 *[qxLanes]float32) {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx3Trials8AVX2(nums *float32, den float32, x *float32, min float32, wd *float64, xd *[64]float64, n int, nmax float32, sumW, sumX, sumX2, bestMAD float64, out *qkx3Lanes) uint32 {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx2Trials16AVX2(nums *float32, den float32, xm *[64]float32, x, w *float32, n int, nmax, sumW, sumX float32, useMAD bool, out *qkx2Lanes) {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx2FirstErrorAVX2(xm *[64]float32, x, w *float32, n int, nmax, iscale, scale, min float32, useMAD bool, L *uint8) float32 {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx3RefineScanAVX2(x *float32, L *uint8, n int, negScale, min, nmax float32) int {
	panic("kernel: no assembly trial loops on this platform")
}

func qxRefineScanAVX2(x, w *float32, L *int8, n int, scale, negScale, nmax float32) int {
	panic("kernel: no assembly trial loops on this platform")
}

func qpTrialsAVX2(nums *[8]float32, max float32, x, w *float32, n int, nmax int32, mse *[8]float32) {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx3SumsAVX2(x, w *float32, n int, wd, xd *[64]float64, out *qkx3Sums) {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx3FirstErrorAVX2(x *float32, wd *float64, n int, iscale, min, scale, nmax float32, L *uint8) float64 {
	panic("kernel: no assembly trial loops on this platform")
}
