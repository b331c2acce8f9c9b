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
// math.FMA gives the exactly rounded float64 result, which rounds again to
// float32. That double rounding can only go wrong when the float64 result
// sits exactly halfway between two float32 values (its low 29 mantissa bits
// are 1<<28); only then is the exact path taken.
func FMA32(a, b, c float32) float32 {
	r := math.FMA(float64(a), float64(b), float64(c))
	if math.Float64bits(r)<<35 != 1<<63 {
		return float32(r)
	}
	return fmaTie(a, b, c)
}

// fmaTie is FMA32 when the float64 result sits on a float32 tie: the exact
// error of the float64 sum says which way the tie really goes, and the sum
// is nudged one float64 ulp to that side before rounding to float32.
func fmaTie(a, b, c float32) float32 {
	p := float64(a) * float64(b) // exact: 24+24 bits
	s := p + float64(c)
	bp := s - p
	e := (p - (s - bp)) + (float64(c) - bp) // TwoSum: s + e == p + c exactly
	if e == 0 {
		return float32(s)
	}
	bits := math.Float64bits(s)
	if bits<<35 == 1<<63 {
		if (e > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}
