//go:build amd64 && !purego

package legacy

//go:noescape
func quantizeQ4_0RefAVX2(dst *byte, src *float32, nb int)

//go:noescape
func quantizeQ4_1RefAVX2(dst *byte, src *float32, nb int)

//go:noescape
func quantizeQ5_0RefAVX2(dst *byte, src *float32, nb int)

//go:noescape
func quantizeQ5_1RefAVX2(dst *byte, src *float32, nb int)

// refBlocksSIMD runs the assembly f of the plain quantizer whose blocks are
// bs bytes on the whole blocks of x that dst has room for, and returns how
// many it did (0 without AVX2, and the caller does them all).
func refBlocksSIMD(dst []byte, x []float32, bs int, f func(dst *byte, src *float32, nb int)) int {
	nb := min(len(x)/qk, len(dst)/bs)
	if !useAVX2 || nb == 0 {
		return 0
	}
	f(&dst[0], &x[0], nb)
	return nb
}

func quantizeQ4_0RefSIMD(dst []byte, x []float32) int {
	return refBlocksSIMD(dst, x, blockQ4_0, quantizeQ4_0RefAVX2)
}

func quantizeQ4_1RefSIMD(dst []byte, x []float32) int {
	return refBlocksSIMD(dst, x, blockQ4_1, quantizeQ4_1RefAVX2)
}

func quantizeQ5_0RefSIMD(dst []byte, x []float32) int {
	return refBlocksSIMD(dst, x, blockQ5_0, quantizeQ5_0RefAVX2)
}

func quantizeQ5_1RefSIMD(dst []byte, x []float32) int {
	return refBlocksSIMD(dst, x, blockQ5_1, quantizeQ5_1RefAVX2)
}
