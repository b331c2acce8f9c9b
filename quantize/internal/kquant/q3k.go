package kquant

import (
	"encoding/binary"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// q3_K block: hmask[32], qs[64], scales[12] (16 6-bit scales), d.
const (
	q3Bytes  = 110
	q3HMask  = 0
	q3Qs     = 32
	q3Scales = 96
	q3D      = 108
)

// quantizeRowQ3K is quantize_q3_K for one row: quantize_row_q3_K_ref without
// importance weights, quantize_row_q3_K_impl with them.
func quantizeRowQ3K(dst []byte, x, qw []float32, s *scratch) {
	nb := len(x) / qk
	for ib := 0; ib < nb; ib++ {
		y := dst[ib*q3Bytes : (ib+1)*q3Bytes]
		xb := x[ib*qk : (ib+1)*qk]
		if qw == nil {
			q3ScalesPlain(y, xb, s)
		} else {
			q3ScalesImatrix(y, xb, qw[ib*qk:(ib+1)*qk], s)
		}
		q3Finish(y, xb, s)
	}
}

// q3ScalesPlain fills the scales and d of quantize_row_q3_K_ref, leaving the
// per-sub-block quants in s.Li.
func q3ScalesPlain(y []byte, xb []float32, s *scratch) {
	var maxScale, amax float32
	for j := 0; j < 16; j++ {
		s.scales[j] = s.search.MakeQ3Quants(4, xb[16*j:16*j+16], s.Li[16*j:16*j+16], true)
		if sc := kernel.Abs32(s.scales[j]); sc > amax {
			amax, maxScale = sc, s.scales[j]
		}
	}
	sc := y[q3Scales : q3Scales+12]
	clear(sc)
	if maxScale == 0 {
		putF16(y[q3D:], 0)
		return
	}
	iscale := -32 / maxScale
	for j := 0; j < 16; j++ {
		l := int8(kernel.NearestIntMul(iscale, s.scales[j])) // the reference stores it in an int8_t first
		packScale6(sc, j, uint8(clamp(int(l), -32, 31)+32))
	}
	putF16(y[q3D:], 1/iscale)
}

// q3ScalesImatrix fills the scales and d of quantize_row_q3_K_impl.
func q3ScalesImatrix(y []byte, xb, qw []float32, s *scratch) {
	sigma2 := 2 * sumSquares(xb) / qk
	for j := 0; j < 16; j++ {
		xs := xb[16*j : 16*j+16]
		w := s.weights[:16]
		kernel.ImatrixWeights(w, xs, qw[16*j:16*j+16], sigma2, useAVX2)
		var sw float32
		for _, v := range w {
			sw += v
		}
		s.sw[j] = sw
		s.scales[j] = s.search.MakeQxQuants(4, xs, s.Li[16*j:16*j+16], 1, w)
	}
	sc := y[q3Scales : q3Scales+12]
	clear(sc)
	dBlock := s.search.MakeQxQuants(32, s.scales[:16], s.Lsi[:16], 1, s.sw[:16])
	for j := 0; j < 16; j++ {
		packScale6(sc, j, uint8(s.Lsi[j]))
	}
	putF16(y[q3D:], dBlock)
}

// packScale6 stores 6-bit scale j of q3_K: low nibbles in bytes 0..7, high
// two bits in bytes 8..11.
func packScale6(sc []byte, j int, l uint8) {
	if j < 8 {
		sc[j] = l & 0xF
	} else {
		sc[j-8] |= (l & 0xF) << 4
	}
	l >>= 4
	sc[j%4+8] |= l << (2 * (j / 4))
}

// q3Finish requantizes with the stored scales and packs quants and high bits.
func q3Finish(y []byte, xb []float32, s *scratch) {
	sc := y[q3Scales : q3Scales+12]
	dAll := getF16(y[q3D:])
	for j := 0; j < 16; j++ {
		var lo uint8
		if j < 8 {
			lo = sc[j] & 0xF
		} else {
			lo = sc[j-8] >> 4
		}
		scale := int(int8(lo|((sc[8+j%4]>>(2*(j/4)))&3)<<4)) - 32
		d := dAll * float32(scale)
		if d == 0 {
			// the quants of the scale search stay
			for i := 16 * j; i < 16*j+16; i++ {
				s.L[i] = uint8(s.Li[i])
			}
			continue
		}
		requant(s.L[16*j:16*j+16], xb[16*j:16*j+16], 0, d, -4, 3, 4)
	}
	// The quants are 0..7: bit 2 of quant j goes to bit j/32 of hmask byte
	// j%32 and the low two bits stay, the reference's `if (L > 3)` without
	// a branch (taken at random, it cost more than the rest of this),
	// eight quants to a word.
	hm := y[q3HMask : q3HMask+32]
	const ones = 0x0101010101010101
	for t := 0; t < 32; t += 8 {
		var h uint64
		for g := 0; g < 8; g++ {
			w := binary.LittleEndian.Uint64(s.L[32*g+t:])
			h |= (w >> 2 & ones) << g
			binary.LittleEndian.PutUint64(s.L[32*g+t:], w&(3*ones))
		}
		binary.LittleEndian.PutUint64(hm[t:], h)
	}
	pack2(y[q3Qs:q3Qs+64], &s.L)
}
