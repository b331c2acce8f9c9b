package formats

import (
	"encoding/binary"
	"math"
)

// Float32 bit patterns bounding the magnitudes that convert to a normal
// half (or round up to infinity) without special handling: 2^-14, the
// smallest normal half, and 2^16, above which every value overflows.
const (
	fp16NormalMin = 0x38800000
	fp16NormalEnd = 0x47800000
)

// FP32ToFP16 converts to IEEE half precision with round-to-nearest-even, as
// the F16C instruction the reference uses does: overflow goes to infinity and
// a NaN stays a quiet NaN with the top mantissa bits kept.
//
// Values in the normal half range take a short branch-free path that the
// compiler inlines; subnormals, zeros, overflow, infinities and NaNs go to
// fp32ToFP16Slow.
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	if fp16Normal(b) {
		return fp16FromNormal(b)
	}
	return fp32ToFP16Slow(b)
}

// fp16Normal reports whether the float32 with bits b has a magnitude in
// [2^-14, 2^16): it converts to a normal half, or rounds up to infinity.
func fp16Normal(b uint32) bool {
	return b&0x7fffffff-fp16NormalMin < fp16NormalEnd-fp16NormalMin
}

// fp16FromNormal is FP32ToFP16 for bits b with fp16Normal(b): it rebiases
// the exponent and rounds the 13 dropped mantissa bits to nearest even; a
// carry out of the mantissa correctly bumps the exponent, up to infinity for
// values from 65520 on.
func fp16FromNormal(b uint32) uint16 {
	a := b & 0x7fffffff
	return uint16(b>>16)&0x8000 | uint16((a+(a>>13)&1+fp16Rebias)>>13)
}

// fp16Rebias, added modulo 2^32, moves a float32 exponent to the half bias
// (-112 in the exponent field) and adds just under half a half-ulp (0xfff)
// for rounding.
const fp16Rebias uint32 = 1<<32 + 0xfff - (127-15)<<23

// fp32ToFP16Slow is FP32ToFP16 for every input, written case by case; the
// fast path is tested against it.
func fp32ToFP16Slow(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		r := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // a carry into the exponent is the correct rounding, up to infinity
	}
	return sign | uint16(r)
}

// PutFP16Row stores src as little-endian IEEE halves (FP32ToFP16) in
// dst[:2*len(src)]. On CPUs with F16C it converts 16 values per step with
// VCVTPS2PH, which rounds exactly as FP32ToFP16 does.
func PutFP16Row(dst []byte, src []float32) {
	PutFP16RowFinite(dst, src)
}

// PutFP16RowFinite is PutFP16Row that also reports whether every value of
// src is finite, found in the same pass over src: a quantizer checks its
// input for free.
func PutFP16RowFinite(dst []byte, src []float32) bool {
	dst = dst[:2*len(src)]
	done, finite := putFP16RowSIMD(dst, src)
	putFP16RowGeneric(dst[2*done:], src[done:])
	return (finite || allFinite(src[:done])) && allFinite(src[done:])
}

// nonFiniteBits is the smallest magnitude bit pattern (bits & 0x7fffffff) of
// an infinity or a NaN; every finite float32 has a smaller one.
const nonFiniteBits = 0x7f800000

// allFinite reports whether x holds no infinity or NaN, in portable Go.
func allFinite(x []float32) bool {
	var m uint32
	for _, v := range x {
		m = max(m, math.Float32bits(v)&0x7fffffff)
	}
	return m < nonFiniteBits
}

// putFP16RowGeneric is PutFP16Row in portable Go, four values per store.
func putFP16RowGeneric(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for len(src) >= 4 && len(dst) >= 8 {
		b0 := math.Float32bits(src[0])
		b1 := math.Float32bits(src[1])
		b2 := math.Float32bits(src[2])
		b3 := math.Float32bits(src[3])
		var h uint64
		if fp16Normal(b0) && fp16Normal(b1) && fp16Normal(b2) && fp16Normal(b3) {
			h = uint64(fp16FromNormal(b0)) | uint64(fp16FromNormal(b1))<<16 |
				uint64(fp16FromNormal(b2))<<32 | uint64(fp16FromNormal(b3))<<48
		} else {
			h = uint64(fp32ToFP16Slow(b0)) | uint64(fp32ToFP16Slow(b1))<<16 |
				uint64(fp32ToFP16Slow(b2))<<32 | uint64(fp32ToFP16Slow(b3))<<48
		}
		binary.LittleEndian.PutUint64(dst, h)
		src, dst = src[4:], dst[8:]
	}
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToFP16(v))
	}
}

// FP16ToFP32 converts an IEEE half to float32 exactly.
func FP16ToFP32(h uint16) float32 {
	return fp16Table[h]
}

var fp16Table = func() (t [1 << 16]float32) {
	for i := range t {
		t[i] = fp16ToFP32Slow(uint16(i))
	}
	return
}()

func fp16ToFP32Slow(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// subnormal: value = mant * 2^-24
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// FP32ToBF16 converts to bfloat16 the way the reference does: round to
// nearest even, and a NaN becomes a quiet NaN (never rounded to infinity).
func FP32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + (u>>16)&1)) >> 16)
}

// PutBF16Row stores src as little-endian bfloat16 values (FP32ToBF16) in
// dst[:2*len(src)], with AVX2 where the CPU has it.
func PutBF16Row(dst []byte, src []float32) {
	PutBF16RowFinite(dst, src)
}

// PutBF16RowFinite is PutBF16Row that also reports whether every value of
// src is finite, found in the same pass (as PutFP16RowFinite).
func PutBF16RowFinite(dst []byte, src []float32) bool {
	dst = dst[:2*len(src)]
	done, finite := putBF16RowSIMD(dst, src)
	if !finite {
		// The SIMD part may hold an infinity or a NaN, and it converts
		// NaNs wrongly: redo the whole row in Go (rare, as quantizers
		// reject such rows).
		done = 0
	}
	putBF16RowGeneric(dst[2*done:], src[done:])
	return allFinite(src[done:])
}

// putBF16RowGeneric is PutBF16Row in portable Go, four values per store.
func putBF16RowGeneric(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for len(src) >= 4 && len(dst) >= 8 {
		h0 := uint64(FP32ToBF16(src[0]))
		h1 := uint64(FP32ToBF16(src[1]))
		h2 := uint64(FP32ToBF16(src[2]))
		h3 := uint64(FP32ToBF16(src[3]))
		binary.LittleEndian.PutUint64(dst, h0|h1<<16|h2<<32|h3<<48)
		src, dst = src[4:], dst[8:]
	}
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(v))
	}
}

// BF16ToFP32 widens a bfloat16 exactly.
func BF16ToFP32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// BF16RowToFP32 widens the little-endian bfloat16 values in src into
// dst[:len(src)/2] exactly (BF16ToFP32), with AVX2 where the CPU has it:
// how a quantizer reads a bf16 model's rows. dst must hold len(src)/2
// values.
func BF16RowToFP32(dst []float32, src []byte) {
	n := len(src) / 2
	done := bf16RowToFP32SIMD(dst[:n], src)
	bf16RowToFP32Go(dst[done:n], src[2*done:2*n])
}

// BF16RowToFP32Magnitude is BF16RowToFP32 that also returns the largest
// magnitude among the values as a bit pattern without the sign (a NaN's is
// above infinity's 0x7f80; 0 for no values), found in the same pass: a
// reader of a bf16 model checks its input for values too large for a later
// step at no cost of its own.
func BF16RowToFP32Magnitude(dst []float32, src []byte) uint16 {
	n := len(src) / 2
	done, m := bf16RowToFP32MaxSIMD(dst[:n], src)
	return max(m, bf16RowToFP32Go(dst[done:n], src[2*done:2*n]))
}

// BF16RowToFP16Magnitude converts the little-endian bfloat16 values in src
// to little-endian IEEE halves in dst[:len(src)], each as FP32ToFP16 of the
// value widened (rounding to nearest even, as F16C does), and returns the
// largest magnitude among them as BF16RowToFP32Magnitude does, in one pass
// without float32 rows: how an f16 file is made from a bf16 model. A value
// of 65520 or more becomes an infinity: the caller checks the magnitude.
// dst must hold len(src) bytes.
func BF16RowToFP16Magnitude(dst, src []byte) uint16 {
	n := len(src) / 2
	dst = dst[:2*n]
	done, m := bf16RowToFP16MaxSIMD(dst, src[:2*n])
	return max(m, bf16RowToFP16Go(dst[2*done:], src[2*done:2*n]))
}

// bf16RowToFP16Go is BF16RowToFP16Magnitude in Go.
func bf16RowToFP16Go(dst, src []byte) uint16 {
	var m uint16
	for i := 0; i+1 < len(src); i += 2 {
		h := binary.LittleEndian.Uint16(src[i:])
		binary.LittleEndian.PutUint16(dst[i:], FP32ToFP16(BF16ToFP32(h)))
		m = max(m, h&0x7fff)
	}
	return m
}

// bf16RowToFP32Go widens src into dst (as many values) in Go and returns
// the largest magnitude bit pattern among them.
func bf16RowToFP32Go(dst []float32, src []byte) uint16 {
	var m uint16
	for len(src) >= 8 && len(dst) >= 4 {
		u := binary.LittleEndian.Uint64(src)
		lo, hi := uint32(u), uint32(u>>32)
		dst[0] = math.Float32frombits(lo << 16)
		dst[1] = math.Float32frombits(lo &^ 0xffff)
		dst[2] = math.Float32frombits(hi << 16)
		dst[3] = math.Float32frombits(hi &^ 0xffff)
		m = max(m, uint16(lo)&0x7fff, uint16(lo>>16)&0x7fff, uint16(hi)&0x7fff, uint16(hi>>16)&0x7fff)
		src, dst = src[8:], dst[4:]
	}
	for i := range dst {
		h := binary.LittleEndian.Uint16(src[2*i:])
		dst[i] = BF16ToFP32(h)
		m = max(m, h&0x7fff)
	}
	return m
}

// FirstNonFinite returns the index of the first infinity or NaN in x, or -1
// if every value is finite. It scans with AVX2 where the CPU has it, so a
// quantizer can check its input at memory speed.
func FirstNonFinite(x []float32) int {
	done, found := anyNonFiniteSIMD(x)
	if !found {
		for i, v := range x[done:] {
			if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
				return done + i
			}
		}
		return -1
	}
	for i, v := range x {
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return i
		}
	}
	return -1
}

// MaxBits returns the largest bit pattern of the values of x, read as
// unsigned integers (0 for an empty slice): below 0x7f800000 exactly when
// every value is +0 or a positive finite number. It runs with AVX2 where the
// CPU has it, for checks on every call of a quantizer.
func MaxBits(x []float32) uint32 {
	done, m := maxBitsSIMD(x)
	for _, v := range x[done:] {
		m = max(m, math.Float32bits(v))
	}
	return m
}

// BF16MaxMagnitude returns the largest bit pattern v & 0x7fff of the
// little-endian bfloat16 values in src (0 for none): their largest
// magnitude while they are finite, and infinity's (0x7f80) or more if one
// is an infinity or a NaN. A bf16 row's scale (q8_KV's) comes from it
// without widening the row.
func BF16MaxMagnitude(src []byte) uint16 {
	done, m := bf16MaxSIMD(src)
	return max(m, bf16MaxGo(src[2*done:]))
}

// bf16MaxGo is BF16MaxMagnitude in Go, four values per load.
func bf16MaxGo(src []byte) uint16 {
	const mags = 0x7fff7fff7fff7fff
	var m0, m1, m2, m3 uint16
	for ; len(src) >= 8; src = src[8:] {
		u := binary.LittleEndian.Uint64(src) & mags
		m0, m1 = max(m0, uint16(u)), max(m1, uint16(u>>16))
		m2, m3 = max(m2, uint16(u>>32)), max(m3, uint16(u>>48))
	}
	for ; len(src) >= 2; src = src[2:] {
		m0 = max(m0, binary.LittleEndian.Uint16(src)&0x7fff)
	}
	return max(m0, m1, m2, m3)
}
