package legacy

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/formats"
)

const (
	blockMXFP4    = 17  // E8M0 exponent + 16 bytes of nibbles
	blockQ1_0G128 = 18  // fp16 d + 128 sign bits
	qk1_0         = 128 // weights per q1_0_g128 block
)

// mxfp4Values are the FP4 (E2M1) values in units of half the block scale
// (kvalues_mxfp4).
var mxfp4Values = [16]float32{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

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
// uint8 the way GCC's x86 code does (via int32).
func mxfp4Exponent(amax float32) uint8 {
	l := float32(math.Log2(float64(amax)))
	return uint8(int32(float32(math.Floor(float64(l))) - 2 + 127))
}

// quantizeMXFP4Blocks is quantize_row_mxfp4_impl over whole blocks. The
// reference ignores the importance matrix.
func quantizeMXFP4Blocks(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : ib*qk+qk]
		y := dst[ib*blockMXFP4 : (ib+1)*blockMXFP4]
		clear(y)
		amax := absMax(xb)
		if amax == 0 {
			continue
		}
		e := mxfp4Exponent(amax)
		d := e8m0Half(e)
		y[0] = e
		for j := 0; j < qk/2; j++ {
			y[1+j] = bestIndexMXFP4(d, xb[j]) | bestIndexMXFP4(d, xb[j+qk/2])<<4
		}
	}
}

func quantizeMXFP4(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	quantizeMXFP4Blocks(dst, src)
	return nil
}

// quantizeQ1_0G128 is quantize_row_q1_0_g128: per 128 weights the scale is
// the mean magnitude (summed in order) and each weight keeps only its sign
// (bit set for >= 0). The reference ignores the importance matrix.
func quantizeQ1_0G128(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
	for ib := 0; ib < len(src)/qk1_0; ib++ {
		x := src[ib*qk1_0 : (ib+1)*qk1_0]
		y := dst[ib*blockQ1_0G128 : (ib+1)*blockQ1_0G128]
		var sum float32
		for _, v := range x {
			sum += float32(math.Abs(float64(v)))
		}
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(sum/qk1_0))
		qs := y[2:]
		clear(qs)
		for j, v := range x {
			if v >= 0 {
				qs[j/8] |= 1 << (j % 8)
			}
		}
	}
	return nil
}
