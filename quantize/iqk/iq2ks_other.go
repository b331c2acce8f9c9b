//go:build !amd64 || purego

package iqk

const useIQ2KSAVX2 = false

func iq2ksFitAVX2(x, w *float32, params *[12]float32, out *[4]float32) {
	panic("iqk: iq2ksFitAVX2 without AVX2")
}

func iq2ksErrorAVX2(x, w *float32, params *[8]float32, negD float32, idx *[32]int32) float32 {
	panic("iqk: iq2ksErrorAVX2 without AVX2")
}

func iq2ksFitsAVX2(x, w *float32, params *[12]float32, n int, out *[4]float32) {
	panic("iqk: iq2ksFitsAVX2 without AVX2")
}
