// Package ternary quantizes the ternary types (iq1_bn, iq2_bn, iq2_bn_r4):
// every weight becomes -1, 0 or +1 times one scale per row, as BitNet and
// TriLM models store them.
package ternary

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/kernel"
)

// Kernels returns the kernels this package implements.
func Kernels() kernel.Set {
	return kernel.Set{
		formats.IQ1_BN:    perRow(formats.IQ1_BN, quantizeRowIQ1BN),
		formats.IQ2_BN:    perRow(formats.IQ2_BN, quantizeRowIQ2BN),
		formats.IQ2_BN_R4: quantizeIQ2BNR4,
	}
}

// blockSize is the number of weights in one iq1_bn / iq2_bn block.
const blockSize = 64

// perRow turns a one-row quantizer into a kernel. The reference ignores the
// importance matrix for these types.
func perRow(t formats.Type, row func(dst []byte, src []float32)) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
		if ne0%blockSize != 0 {
			return fmt.Errorf("ternary: %s rows of %d weights are not a multiple of %d", t, ne0, blockSize)
		}
		rs, err := t.RowSize(int64(ne0))
		if err != nil {
			return err
		}
		for r := 0; r < nrows; r++ {
			row(dst[r*int(rs):(r+1)*int(rs)], src[r*ne0:(r+1)*ne0])
		}
		return nil
	}
}

func rowAbsMax(src []float32) float32 {
	var m uint32 // non-negative floats order like their bit patterns
	for _, v := range src {
		if a := math.Float32bits(v) &^ (1 << 31); a > m {
			m = a
		}
	}
	return math.Float32frombits(m)
}

// trit maps a weight to 0 (negative), 1 (zero) or 2 (positive): anything
// below half the row's largest magnitude counts as zero. threshBits is the
// bit pattern of that non-negative threshold: non-negative floats order like
// their bit patterns, so the comparisons are integer ones and branch-free
// (a sign is random in real weights, so branches would mispredict).
func trit(v float32, threshBits uint32) int {
	bits := math.Float32bits(v)
	absBits := bits &^ (1 << 31)
	zero := uint32(int32(absBits-threshBits)) >> 31 // |v| < thresh
	nonzero := (absBits | -absBits) >> 31           // v != 0 (-0 is not negative)
	neg := bits >> 31 & nonzero                     // v < 0
	return int(zero + 2*(1-zero)*(1-neg))
}

// pow3 holds the base-3 digit weights the iq1_bn packing uses.
var pow3 = [6]int{1, 3, 9, 27, 81, 243}

// quantizeRowIQ1BN writes the row maximum as fp16, then per block of 64 four
// groups of 16 trits: 15 as three 5-trit bytes, the 16th of each group
// collected into the block's extra byte. A 5-trit number n (0..242) is stored
// as ceil(256*n/243) so that the decoder recovers each trit with a multiply
// and a shift.
func quantizeRowIQ1BN(dst []byte, src []float32) {
	m := rowAbsMax(src)
	binary.LittleEndian.PutUint16(dst, formats.FP32ToFP16(m))
	thresh := math.Float32bits(0.5 * m)
	blocks := dst[2:]
	for ib := 0; ib < len(src)/blockSize; ib++ {
		xb := src[ib*blockSize:]
		y := blocks[ib*13 : (ib+1)*13]
		v13 := 0
		for i16 := 0; i16 < 4; i16++ {
			for k := 0; k < 3; k++ {
				idx := 0
				for j := 0; j < 5; j++ {
					idx += pow3[j] * trit(xb[16*i16+5*k+j], thresh)
				}
				y[3*i16+k] = uint8((256*idx + pow3[5] - 1) / pow3[5])
			}
			v13 += pow3[i16] * trit(xb[16*i16+15], thresh)
		}
		y[12] = uint8((256*v13 + pow3[5] - 1) / pow3[5])
	}
}

// quantizeRowIQ2BN writes the row maximum as float32, then per block of 64
// sixteen bytes: byte j holds the trits of weights j, j+16, j+32, j+48 in
// its 2-bit fields from low to high.
func quantizeRowIQ2BN(dst []byte, src []float32) {
	m := rowAbsMax(src)
	binary.LittleEndian.PutUint32(dst, math.Float32bits(m))
	thresh := math.Float32bits(0.5 * m)
	blocks := dst[4:]
	for ib := 0; ib < len(src)/blockSize; ib++ {
		xb := src[ib*blockSize : (ib+1)*blockSize]
		y := blocks[ib*16 : (ib+1)*16]
		for j := range y {
			y[j] = uint8(trit(xb[j], thresh) | trit(xb[j+16], thresh)<<2 | trit(xb[j+32], thresh)<<4 | trit(xb[j+48], thresh)<<6)
		}
	}
}

// quantizeIQ2BNR4 quantizes four rows at a time as iq2_bn and interleaves
// them, as the reference does.
func quantizeIQ2BNR4(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
	base, err := formats.IQ2_BN.RowSize(int64(ne0))
	if err != nil {
		return err
	}
	tmp := make([]byte, 4*int(base))
	q := perRow(formats.IQ2_BN, quantizeRowIQ2BN)
	for r := 0; r < nrows; r += 4 {
		if err := q(tmp, src[r*ne0:(r+4)*ne0], 4, ne0, imatrix); err != nil {
			return err
		}
		if err := formats.Interleave(formats.IQ2_BN_R4, ne0, dst[r*int(base):(r+4)*int(base)], tmp); err != nil {
			return fmt.Errorf("ternary: %w", err)
		}
	}
	return nil
}
