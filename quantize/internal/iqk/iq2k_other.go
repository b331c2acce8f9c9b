//go:build !amd64 || purego

package iqk

const useSplitSearchAVX2 = false

func splitSearchFast(sumx, sumw []float32, e2, rL float64, maxI1, minI3 int) (d float32, isShifted bool) {
	panic("iqk: splitSearchFast without AVX2")
}
