//go:build !amd64 || purego

package kernel

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

// hasAVX2 and useAVX2 are false here: the portable loops run.
var hasAVX2 = false

var useAVX2 = false

var useAVX512 = false

var qkx3Wide = false

func qxTrialSums512(nums *[qxLanes]float32, max float32, x, w, wx *float32, n int, lo, hi, best float32, scales, sumlx, suml2 *[qxLanes]float32) uint64 {
	return 0
}

func qxTrialSumsAVX2(nums *[qxLanes]float32, max float32, x, w, wx *float32, n int, lo, hi, best float32, scales, sumlx, suml2 *[qxLanes]float32) uint64 {
	return 0
}

func qxFirstAVX2(x, w *float32, n int, nmax float32, squares bool, wx *float32, L *int8, out *qxFirst) {
}

func qkx3Trials8AVX2(nums *float32, den float32, x *float32, min float32, wd *float64, xd *[64]float64, n int, nmax float32, sumW, sumX, sumX2, bestMAD float64, out *qkx3Lanes) uint32 {
	return 0
}

func qkx3Trials16AVX512(nums *float32, den float32, x *float32, min float32, wd *float64, xd *[64]float64, n int, nmax float32, sumW, sumX, sumX2, bestMAD float64, out *qkx3Lanes) uint32 {
	return 0
}

func qkx2Trials16AVX2(nums *float32, den float32, x, w *float32, n int, min, nmax, sumW, sumX float32, useMAD bool, bestMAD float32, out *qkx2Lanes) uint32 {
	return 0
}

func qkx2Trials8AVX2(nums *float32, den float32, x, w *float32, n int, min, nmax, sumW, sumX float32, useMAD bool, bestMAD float32, out *qkx2Lanes) uint32 {
	return 0
}

func qkx2SumsAVX2(x, w *float32, n int, fused bool, out *qkx2Sums) {}

func qkx2FirstErrorAVX2(x, w *float32, n int, nmax, iscale, scale, min float32, useMAD bool, L *uint8) float32 {
	return 0
}

func qkx3RefineScanAVX2(x *float32, L *uint8, n int, negScale, min, nmax float32) int {
	return 0
}

func qxRefineScanAVX2(x, w *float32, L *int8, n int, scale, negScale, nmax float32) int {
	return 0
}

func qpTrialsAVX2(nums *[8]float32, max float32, x, w *float32, n int, nmax int32, mse *[8]float32, fused bool) {
}

func qkx3SumsAVX2(x, w *float32, n int, fused bool, wd, xd *[64]float64, out *qkx3Sums) {}

func qkx3FirstErrorAVX2(x *float32, wd *float64, n int, iscale, min, scale, nmax float32, L *uint8) float64 {
	return 0
}

func q3QuantsAVX2(x *float32, n int, nmax int, eps float32, L *int8) (scale float32, zero bool) {
	return
}

func qkx2QuantsAVX2(x *float32, n int, iscale, min, nmax float32, L *uint8) {}

func imatrixWeightsAVX2(w, x, qw *float32, n int, sigma2 float32) {}

func sigmaWeightsAVX2(w, x *float32, n int, c float32) {}
