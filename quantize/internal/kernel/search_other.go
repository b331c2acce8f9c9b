//go:build !amd64 || purego

package kernel

// hasAVX2 and useAVX2 are false here: the portable loops run.
const hasAVX2 = false

var useAVX2 = false

func qxTrialSumsAVX2(nums *[qxLanes]float32, max float32, x, w, wx *float32, n int, lo, hi, best float32, scales, sumlx, suml2 *[qxLanes]float32) uint64 {
	panic("kernel: no assembly trial loops on this platform")
}

func qxFirstAVX2(x, w *float32, n int, nmax float32, squares bool, wx *float32, L *int8, out *qxFirst) {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx3Trials8AVX2(nums *float32, den float32, x *float32, min float32, wd *float64, xd *[64]float64, n int, nmax float32, sumW, sumX, sumX2, bestMAD float64, out *qkx3Lanes) uint32 {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx2Trials16AVX2(nums *float32, den float32, x, w *float32, n int, min, nmax, sumW, sumX float32, useMAD bool, bestMAD float32, out *qkx2Lanes) uint32 {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx2Trials8AVX2(nums *float32, den float32, x, w *float32, n int, min, nmax, sumW, sumX float32, useMAD bool, bestMAD float32, out *qkx2Lanes) uint32 {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx2SumsAVX2(x, w *float32, n int, fused bool, out *qkx2Sums) {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx2FirstErrorAVX2(x, w *float32, n int, nmax, iscale, scale, min float32, useMAD bool, L *uint8) float32 {
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

func q3QuantsAVX2(x *float32, n int, nmax int, eps float32, L *int8) (scale float32, zero bool) {
	panic("kernel: no assembly trial loops on this platform")
}

func qkx2QuantsAVX2(x *float32, n int, iscale, min, nmax float32, L *uint8) {
	panic("kernel: no assembly trial loops on this platform")
}
