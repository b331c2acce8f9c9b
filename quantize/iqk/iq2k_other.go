//go:build !amd64 || purego

package iqk

const useSplitScanAVX2 = false

func splitScanAVX2(sumx, sumw *float32, i1, i2, i3, n, minI3 int, c *[12][4]float64) (hitI2, hitI3, mask int) {
	panic("iqk: splitScanAVX2 without AVX2")
}
