//go:build !amd64 || purego

package iqk

const useWeightsAVX2 = false

func weightsAVX2(weight, x, qw *float32, n int, sigma2 float32) {
	panic("iqk: weightsAVX2 without AVX2")
}
