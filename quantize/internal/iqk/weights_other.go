//go:build !amd64 || purego

package iqk

const useWeightsAVX2 = false

func weightsAVX2(weight, x, qw *float32, n int, sigma2 float32) {
	panic("iqk: weightsAVX2 without AVX2")
}

func qxTrialsAVX2(x, qw *float32, n int, iscale *[24]float32, nmax float32, out *[2][24]float32) {
	panic("iqk: qxTrialsAVX2 without AVX2")
}
