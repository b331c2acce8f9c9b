package kquant

import "github.com/gquant/gquant/quantize/internal/kernel"

// requant stores clamp(nearest_int((x[i]+dm)/d), lo, hi) + off in L[i], as
// the final quantization of every K-quant computes it (dm is 0 for the
// symmetric types: x+0 only turns -0 into +0, which rounds the same).
// lo+off and hi+off must be in [0, 255].
func requant(L []uint8, x []float32, dm, d float32, lo, hi, off int) {
	if useAVX2 && len(x)%8 == 0 && len(x) > 0 {
		requantAVX2(&x[0], len(x), dm, d, int32(lo), int32(hi), int32(off), &L[:len(x)][0])
		return
	}
	requantPortable(L, x, dm, d, lo, hi, off)
}

func requantPortable(L []uint8, x []float32, dm, d float32, lo, hi, off int) {
	L = L[:len(x)]
	for i, v := range x {
		L[i] = uint8(clamp(kernel.NearestInt((v+dm)/d), lo, hi) + off)
	}
}
