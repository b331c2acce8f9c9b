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
// The float32 product is exact in float64, but the float64 sum may round, and
// rounding that sum again to float32 can then land on the wrong side of a tie.
// That only happens when the float64 sum sits exactly halfway between two
// float32 values while the exact result does not: nudge it by the sign of the
// error term so the second rounding sees the true side.
func FMA32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	// TwoSum: e is the exact error of s.
	bp := s - p
	e := (p - (s - bp)) + (float64(c) - bp)
	if e == 0 {
		return float32(s)
	}
	bits := math.Float64bits(s)
	// A float64 with |s| in the normal float32 range is halfway between two
	// float32 values when its low 29 mantissa bits are exactly 1<<28.
	if bits&(1<<29-1) == 1<<28 {
		if (e > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}
