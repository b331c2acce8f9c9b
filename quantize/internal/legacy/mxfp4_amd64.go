//go:build amd64 && !purego

package legacy

//go:noescape
func quantizeMXFP4AVX2(dst *byte, src *float32, nb int) int

// quantizeMXFP4SIMD quantizes leading blocks of x into dst with AVX2 as
// quantizeMXFP4Blocks does, as long as they are zero or take its fast path,
// and returns how many it did (0 without AVX2).
func quantizeMXFP4SIMD(dst []byte, x []float32) int {
	nb := min(len(x)/qk, len(dst)/blockMXFP4)
	if !useAVX2 || nb == 0 {
		return 0
	}
	return quantizeMXFP4AVX2(&dst[0], &x[0], nb)
}
