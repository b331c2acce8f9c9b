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

// GuardWeights is the reference's QHelper::row_weights: it copies imatrix
// into dst, except that a block of block values whose squared weights,
// squared values or weighted magnitudes sum to no more than block·1e-18 gets
// the tiny uniform weight 1e-9 instead, so the searches still have something
// to weigh. fused says how the reference's build sums there: with fused
// multiply-adds (quantize_*_r4 of the legacy and i-quants) or as in-order
// sums of rounded products (GCC's vectorised loops of the k- and iqk-quants);
// the two can differ only for sums at the threshold itself. imatrix nil
// gives nil.
//
// Most blocks are settled without the sums: every term is non-negative and
// rounding is monotone, so each sum is at least any one of its terms rounded
// to float32, and one index whose three terms all exceed twice the
// threshold keeps the block's weights. That needs finite input (with an
// infinity a 0·∞ term makes a sum NaN), which QuantizeRows checks before any
// kernel runs.
func GuardWeights(dst, imatrix, x []float32, block int, fused bool) []float32 {
	if imatrix == nil {
		return nil
	}
	const eps = float32(1e-9)
	dst = dst[:len(x)]
	copy(dst, imatrix[:len(x)])
	limit := float32(block) * (eps * eps)
	sure := 2 * limit
blocks:
	for ib := 0; ib+block <= len(x); ib += block {
		w, xb := dst[ib:ib+block], x[ib:ib+block:ib+block]
		for j, v := range w {
			a := Abs32(xb[j])
			if float32(v*v) > sure && float32(a*a) > sure && float32(v*a) > sure {
				continue blocks
			}
		}
		var sumw2, sumx2, sumwx float32
		if fused {
			for j, v := range w {
				sumw2 = FMA32(v, v, sumw2)
				sumx2 = FMA32(xb[j], xb[j], sumx2)
				sumwx = FMA32(v, Abs32(xb[j]), sumwx)
			}
		} else {
			for j, v := range w {
				sumw2 += float32(v * v)
				sumx2 += float32(xb[j] * xb[j])
				sumwx += float32(v * Abs32(xb[j]))
			}
		}
		if sumw2 > limit && sumx2 > limit && sumwx > limit {
			continue
		}
		for j := range w {
			w[j] = eps
		}
	}
	return dst
}
