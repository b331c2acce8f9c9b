// Package ternary quantizes the ternary types (iq1_bn, iq2_bn, iq2_bn_r4):
// every weight becomes -1, 0 or +1 times one scale per row, as BitNet and
// TriLM models store them.
package ternary

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Kernels returns the kernels this package implements; no option changes
// them.
func Kernels(kernel.Options) kernel.Set {
	return kernel.Set{
		formats.IQ1_BN:    perRow(formats.IQ1_BN, quantizeRowIQ1BN),
		formats.IQ2_BN:    perRow(formats.IQ2_BN, quantizeRowIQ2BN),
		formats.IQ2_BN_R4: quantizeIQ2BNR4,
	}
}

// blockSize is the number of weights in one iq1_bn / iq2_bn block.
const blockSize = 64

// perRow turns a one-row quantizer into a kernel. The reference ignores the
// importance matrix for these types. codes is scratch for the row's trits.
func perRow(t formats.Type, row func(dst []byte, src []float32, codes []byte)) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, _ []float32) error {
		if ne0%blockSize != 0 {
			return fmt.Errorf("ternary: %s rows of %d weights are not a multiple of %d", t, ne0, blockSize)
		}
		rs, err := t.RowSize(int64(ne0))
		if err != nil {
			return err
		}
		codes := make([]byte, ne0)
		for r := 0; r < nrows; r++ {
			row(dst[r*int(rs):(r+1)*int(rs)], src[r*ne0:(r+1)*ne0], codes)
		}
		return nil
	}
}

// rowAbsMax is the largest magnitude in src, as the reference's loop of
// std::max(max, fabsf(x)) finds it: a NaN never replaces the maximum.
func rowAbsMax(src []float32) float32 {
	if useAVX2 && len(src) >= 32 && len(src)%32 == 0 {
		var lanes [8]float32
		absMaxAVX2(&src[0], len(src), &lanes)
		m := lanes[0]
		for _, v := range lanes[1:] {
			m = max(m, v) // no NaN left: any order gives the same
		}
		return m
	}
	return rowAbsMaxGo(src)
}

// rowAbsMaxGo is the portable rowAbsMax and the reference for the
// assembly. Non-negative floats order like their bit patterns, so the
// comparisons are integer ones (branch-free), in four independent chains.
func rowAbsMaxGo(src []float32) float32 {
	var m0, m1, m2, m3 uint32
	for len(src) >= 4 {
		a0 := math.Float32bits(src[0]) &^ (1 << 31)
		a1 := math.Float32bits(src[1]) &^ (1 << 31)
		a2 := math.Float32bits(src[2]) &^ (1 << 31)
		a3 := math.Float32bits(src[3]) &^ (1 << 31)
		m0 = max(m0, notNaN(a0))
		m1 = max(m1, notNaN(a1))
		m2 = max(m2, notNaN(a2))
		m3 = max(m3, notNaN(a3))
		src = src[4:]
	}
	for _, v := range src {
		m0 = max(m0, notNaN(math.Float32bits(v)&^(1<<31)))
	}
	return math.Float32frombits(max(max(m0, m1), max(m2, m3)))
}

// notNaN is the bits a of a magnitude, or 0 for a NaN.
func notNaN(a uint32) uint32 {
	const inf = 0x7f800000
	if a > inf {
		return 0
	}
	return a
}

// tritBits maps a weight (its bits) to 0 (negative), 1 (zero) or 2
// (positive) as the reference does: 1 if |v| < thresh (anything below half
// the row's largest magnitude counts as zero), else 0 if v < 0, else 2 (also
// for -0 and NaN). threshBits is the bit pattern of the non-negative,
// non-NaN threshold: non-negative floats order like their bit patterns, so
// the comparisons are integer ones and branch-free (a sign is random in real
// weights, so branches would mispredict).
func tritBits(bits, threshBits uint32) uint32 {
	const inf = 0x7f800000
	abs := bits &^ (1 << 31)
	zero := (abs - threshBits) >> 31                                // |v| < thresh: both below 1<<31
	neg := bits >> 31 & ((abs | -abs) >> 31) & ^((inf - abs) >> 31) // v < 0: not -0, not NaN
	// (zero, neg) -> trit: (0,0) 2, (1,0) 1, (0,1) 0, (1,1) 1.
	return 0x46 >> ((zero | neg<<1) << 1) & 3
}

// packTrits5 maps a 5-trit number n (0..242) to the byte iq1_bn stores,
// ceil(256*n/243), so that the decoder recovers each trit with a multiply
// and a shift.
// (256 entries, so that a uint8 index needs no bounds check).
var packTrits5 = func() (t [256]uint8) {
	for n := range 243 {
		t[n] = uint8((256*n + 242) / 243)
	}
	return t
}()

// rowTrits writes the trit of each weight of src to codes, one byte each.
func rowTrits(codes []byte, src []float32, thresh float32) {
	codes = codes[:len(src)]
	if useAVX2 && len(src) >= 32 && len(src)%32 == 0 {
		tritsAVX2(&src[0], len(src), thresh, &codes[0])
		return
	}
	th := math.Float32bits(thresh)
	for i, v := range src {
		codes[i] = uint8(tritBits(math.Float32bits(v), th))
	}
}

// quantizeRowIQ1BN writes the row maximum as fp16, then per block of 64 four
// groups of 16 trits: 15 as three 5-trit bytes, the 16th of each group
// collected into the block's extra byte (see packTrits5).
func quantizeRowIQ1BN(dst []byte, src []float32, codes []byte) {
	m := rowAbsMax(src)
	binary.LittleEndian.PutUint16(dst, formats.FP32ToFP16(m))
	rowTrits(codes, src, 0.5*m)
	blocks := dst[2:]
	for ib := 0; ib < len(src)/blockSize; ib++ {
		c := (*[blockSize]byte)(codes[ib*blockSize : (ib+1)*blockSize])
		y := (*[13]byte)(blocks[ib*13 : (ib+1)*13])
		for i16 := 0; i16 < 4; i16++ {
			g := (*[16]byte)(c[16*i16 : 16*i16+16])
			y[3*i16] = packTrits5[g[0]+3*g[1]+9*g[2]+27*g[3]+81*g[4]]
			y[3*i16+1] = packTrits5[g[5]+3*g[6]+9*g[7]+27*g[8]+81*g[9]]
			y[3*i16+2] = packTrits5[g[10]+3*g[11]+9*g[12]+27*g[13]+81*g[14]]
		}
		y[12] = packTrits5[c[15]+3*c[31]+9*c[47]+27*c[63]]
	}
}

// quantizeRowIQ2BN writes the row maximum as float32, then per block of 64
// sixteen bytes: byte j holds the trits of weights j, j+16, j+32, j+48 in
// its 2-bit fields from low to high.
func quantizeRowIQ2BN(dst []byte, src []float32, codes []byte) {
	m := rowAbsMax(src)
	binary.LittleEndian.PutUint32(dst, math.Float32bits(m))
	rowTrits(codes, src, 0.5*m)
	blocks := dst[4:]
	le := binary.LittleEndian
	for ib := 0; ib < len(src)/blockSize; ib++ {
		c := codes[ib*blockSize : (ib+1)*blockSize]
		y := blocks[ib*16 : (ib+1)*16]
		// Eight bytes at a time: trits are at most 2, so no field carries
		// into the next byte.
		for h := 0; h < 16; h += 8 {
			le.PutUint64(y[h:], le.Uint64(c[h:])|le.Uint64(c[16+h:])<<2|le.Uint64(c[32+h:])<<4|le.Uint64(c[48+h:])<<6)
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
