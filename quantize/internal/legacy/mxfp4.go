package legacy

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/tables"
)

const (
	blockMXFP4    = 17  // E8M0 exponent + 16 bytes of nibbles
	blockQ1_0G128 = 18  // fp16 d + 128 sign bits
	qk1_0         = 128 // weights per q1_0_g128 block
)

// mxfp4Values are the FP4 (E2M1) values in units of half the block scale
// (kvalues_mxfp4): tables.MXFP4Values as float32, the form the search
// multiplies.
var mxfp4Values = func() (v [16]float32) {
	for i, x := range tables.MXFP4Values {
		v[i] = float32(x)
	}
	return v
}()

// e8m0Half is GGML_E8M0_TO_FP32_HALF: 2^(e-128), with the two smallest codes
// as float32 subnormals.
func e8m0Half(e uint8) float32 {
	switch e {
	case 0:
		return math.Float32frombits(0x00200000)
	case 1:
		return math.Float32frombits(0x00400000)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// bestIndexMXFP4 returns the first code whose value d*v is nearest to x.
func bestIndexMXFP4(d, x float32) byte {
	best := float32(math.Abs(float64(x - d*mxfp4Values[0])))
	index := 0
	for j := 1; j < 16; j++ {
		// d is a power of two and v a small integer: d*v is exact, so the
		// fused multiply-add the reference compiles to gives the same result.
		diff := float32(math.Abs(float64(x - d*mxfp4Values[j])))
		if diff < best {
			best, index = diff, j
		}
	}
	return byte(index)
}

// mxfp4Exponent is the block exponent code the reference picks for a block
// whose largest magnitude is amax > 0: floor(log2f(amax)) - 2 + 127, cast to
// uint8 the way GCC's x86 code does (via int32). It also returns the int32
// before the cast.
func mxfp4Exponent(amax float32) (uint8, int32) {
	l := float32(math.Log2(float64(amax)))
	e := int32(float32(math.Floor(float64(l))) - 2 + 127)
	return uint8(e), e
}

// mxfp4Codes maps ceil(2|x|/d) (0..32; the rest is padding) to the code of the first nearest
// value, with the sign (row 1) choosing codes 9..15 instead of 1..7: the
// midpoints between neighbouring magnitudes (0.5, 1.5, 2.5, 3.5, 5, 7 and
// 10, in units of d) are multiples of 1/2, so all |x|/d in (j/2, (j+1)/2]
// share one code, and a value exactly on a midpoint takes the smaller
// magnitude, which the reference's scan finds first.
var mxfp4Codes = func() (t [2][64]byte) {
	mids := [7]float32{0.5, 1.5, 2.5, 3.5, 5, 7, 10}
	for c := range 33 {
		hi := float32(c) / 2 // the largest |x|/d with this ceiling
		k := 0
		for _, m := range mids {
			if hi > m {
				k++
			}
		}
		t[0][c] = byte(k)
		if k != 0 {
			k |= 8
		}
		t[1][c] = byte(k)
	}
	return t
}()

// mxfp4ExponentFast is mxfp4Exponent without the logarithm, for a normal
// amax > 0 whose mantissa is not within 2^-14 of the next power of two: then
// log2(amax) lies in [e, e+1-2^-17) for amax's unbiased exponent e, which
// is at least half a float32 ulp (at most 2^-17 below 128) short of e+1, so
// log2f cannot round it up to e+1 and the floor is e. It returns false for
// the other values (subnormals, mantissas near 2), which need the logarithm.
func mxfp4ExponentFast(amax float32) (uint8, int32, bool) {
	b := math.Float32bits(amax)
	field := int32(b>>23) & 0xff
	if field == 0 || b&0x7fffff >= 0x7fffff-0x1ff {
		return 0, 0, false
	}
	e := field - 2 // (field - 127) - 2 + 127
	return uint8(e), e, true
}

// b2i is 1 for true, 0 for false (compiled without a branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// quantizeMXFP4Blocks is quantize_row_mxfp4_impl over whole blocks. The
// reference ignores the importance matrix.
//
// The reference scans all 16 codes for the first one nearest to each weight
// (bestIndexMXFP4). When the block's scale d is a normal float and the
// exponent code did not wrap, the largest magnitude is below 32d, so the
// differences to the two codes around a weight are exact (Sterbenz) and the
// others are farther by at least d, far more than their rounding error: the
// first nearest code is then found by comparing the magnitude with the
// midpoints between codes (a tie goes to the smaller magnitude, the earlier
// code), and the weight's sign picks codes 1..7 or 9..15 (codes 0 and 8 are
// both zero; 0 comes first).
//
// It returns false, stopping there, at a block holding an infinity or NaN.
func quantizeMXFP4Blocks(dst []byte, x []float32) bool {
	nb := min(len(x)/qk, len(dst)/blockMXFP4)
	for ib := 0; ib < nb; ib++ {
		// The assembly takes the blocks up to the next one that needs the
		// logarithm or the full scan (or is not finite).
		ib += quantizeMXFP4SIMD(dst[ib*blockMXFP4:nb*blockMXFP4], x[ib*qk:nb*qk])
		if ib == nb {
			break
		}
		if !quantizeMXFP4Block((*[blockMXFP4]byte)(dst[ib*blockMXFP4:]), (*[qk]float32)(x[ib*qk:])) {
			return false
		}
	}
	return true
}

// quantizeMXFP4Block is quantizeMXFP4Blocks for one block in Go.
func quantizeMXFP4Block(y *[blockMXFP4]byte, xb *[qk]float32) bool {
	clear(y[:])
	amax := absMax32(xb)
	if !finite(amax) {
		return false
	}
	if amax == 0 {
		return true
	}
	e, e32, ok := mxfp4ExponentFast(amax)
	if !ok {
		e, e32 = mxfp4Exponent(amax)
	}
	d := e8m0Half(e)
	y[0] = e
	if e32 < 2 || e32 > 250 {
		for j := 0; j < qk/2; j++ {
			y[1+j] = bestIndexMXFP4(d, xb[j]) | bestIndexMXFP4(d, xb[j+qk/2])<<4
		}
		return true
	}
	twoOverD := 2 / d // a power of two: |x|*twoOverD is exact unless tiny
	code := func(v float32) byte {
		b := math.Float32bits(v)
		t := math.Float32frombits(b&^(1<<31)) * twoOverD // < 32
		c := int32(t)
		c += int32(b2i(t > float32(c))) // ceil(t)
		return mxfp4Codes[b>>31][c&63]
	}
	for j := 0; j < qk/2; j++ {
		y[1+j] = code(xb[j]) | code(xb[j+qk/2])<<4
	}
	return true
}

func quantizeMXFP4(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	if !quantizeMXFP4Blocks(dst, src) {
		return ErrNotFinite
	}
	return nil
}

// quantizeQ1_0G128 is quantize_row_q1_0_g128: per 128 weights the scale is
// the mean magnitude (summed in order) and each weight keeps only its sign
// (bit set for >= 0). The reference ignores the importance matrix.
func quantizeQ1_0G128(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	nb := min(len(src)/qk1_0, len(dst)/blockQ1_0G128)
	for ib := 0; ib < nb; ib++ {
		x := (*[qk1_0]float32)(src[ib*qk1_0:])
		y := (*[blockQ1_0G128]byte)(dst[ib*blockQ1_0G128:])
		var sum float32
		for _, v := range x {
			sum += abs32(v)
		}
		binary.LittleEndian.PutUint16(y[:], formats.FP32ToFP16(sum/qk1_0))
		for j := 0; j < qk1_0/8; j++ {
			xj := (*[8]float32)(x[8*j:])
			var bits byte
			for i, v := range xj {
				bits |= byte(b2i(v >= 0)) << i
			}
			y[2+j] = bits
		}
	}
	return nil
}
