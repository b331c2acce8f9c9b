//go:build !amd64 || purego

package iqk

const useIQ2KSAVX2 = false

func iq2ksFitAVX2(x, w *float32, params *[12]float32, out *[4]float32) {
	panic("iqk: iq2ksFitAVX2 without AVX2")
}
