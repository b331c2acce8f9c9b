package formats

// The trellis types (iq1_kt .. iq4_kt) store, per group of 4 or 8 weights,
// an index into a pseudo-random codebook instead of the weights: codeword i
// is produced by a 32-bit linear congruential step from seed i+offset. The
// quantizer (quantize/internal/trellis) and the dequantizers share these definitions.

const (
	// KTOffset is the seed offset of the codebooks of all four types.
	KTOffset = 4096
	// KTOffsetIQ4Alt is the seed offset of iq4_kt's second codebook, used by
	// blocks whose scale byte has bit 0 set.
	KTOffsetIQ4Alt = 4096 + 32768
)

// ktMul is the multiplier of the codebook generator.
const ktMul = 0xCBAC1FED

// KTCodeword writes the len(dst) integer values of the codeword with the
// given seed (index + offset): each step multiplies the state by a constant,
// keeps six bits of each of its four bytes and sums them, centred on zero
// (-126..126). With abs, values are the magnitudes (iq3_kt stores signs
// separately).
func KTCodeword(dst []float32, seed uint32, abs bool) {
	x := seed
	for k := range dst {
		x *= ktMul
		s := x & 0x3f3f3f3f
		v := int32(s&0xff) + int32(s>>8&0xff) + int32(s>>16&0xff) + int32(s>>24) - 126
		if abs && v < 0 {
			v = -v
		}
		dst[k] = float32(v)
	}
}
