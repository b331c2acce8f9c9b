package kernel

import "math"

// NearestInt rounds to the nearest integer, ties to even, the way the
// reference's nearest_int does (adding 1.5*2^23 in float32 arithmetic). Valid
// for |v| <= 4194303.
func NearestInt(v float32) int {
	x := v + float32(12582912)
	return int(math.Float32bits(x)&0x007fffff) - 0x00400000
}

// FMA32 returns a*b+c rounded once to float32, as a hardware fused
// multiply-add does (GCC contracts a*b+c into one in the reference build).
//
// The product of two float32 is exact in float64, so s = a*b + c in float64
// is rounded once; rounding s again to float32 is right unless s sits
// exactly halfway between two float32 values (its low 29 mantissa bits are
// 1<<28), where the first rounding may have moved it onto the tie. Only then
// is the exact error of s needed to tell which side the true value is on.
// Small enough to inline.
func FMA32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	if uint32(math.Float64bits(s))<<3 == 1<<31 {
		z := s - p
		e := (p - (s - z)) + (float64(c) - z) // TwoSum: s + e == a*b + c exactly
		// r is the even neighbour; when the true value lies on the other
		// side of s, the other neighbour, 2s-r (exact), is the answer.
		r := float32(s)
		if e*(float64(r)-s) < 0 {
			return float32(2*s - float64(r))
		}
		return r
	}
	return float32(s)
}
