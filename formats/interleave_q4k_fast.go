package formats

import "encoding/binary"

// A direct q4_K -> q4_k_r4 interleaver, the repack of the most common
// k-quant. The generic kInterleaver goes through one byte per weight; this
// one moves the nibbles eight bytes at a time and gives the same bytes
// (TestKR4FastMatchesGeneric). repack picks whichever of it and its own
// compiled bit map is faster.

const q4KR4Size = 576

// q4KR4Interleave writes the q4_k_r4 blocks of 4 q4_K rows of ne0 weights.
func q4KR4Interleave(group, base []byte, ne0 int) {
	nb := ne0 / qkK
	const lo = 0x0f0f0f0f0f0f0f0f
	for ibl := range nb {
		y := group[ibl*q4KR4Size : (ibl+1)*q4KR4Size]
		sh, sl, qs := y[16:32:32], y[32:64:64], y[64:576]
		for k := range 4 {
			x := base[(k*nb+ibl)*q4KSize : (k*nb+ibl+1)*q4KSize]
			y[2*k], y[2*k+1] = x[q4KD], x[q4KD+1]
			y[2*(k+4)], y[2*(k+4)+1] = x[q4KDmin], x[q4KDmin+1]
			// The 6-bit scale and min of sub-block ib (kScaleMin), byte
			// lane j of each word: for ib = j < 4 the low 6 bits of s0
			// and s1, for ib = j+4 the nibbles of s2 and the top 2 bits
			// of s0 and s1. Their low nibbles go to scales_l[4*ib+k],
			// their top bits (scale's at 0-1, min's at 2-3, ib = j in
			// the low nibble, j+4 in the high one) to scales_h[4*j+k],
			// which only row k writes.
			s0 := binary.LittleEndian.Uint32(x[q4KScales:])
			s1 := binary.LittleEndian.Uint32(x[q4KScales+4:])
			s2 := binary.LittleEndian.Uint32(x[q4KScales+8:])
			const lo4, lo2 = 0x0f0f0f0f, 0x03030303
			low := s0&lo4 | (s1&lo4)<<4
			top := s0>>4&lo2 | (s1>>4&lo2)<<2 | (s0>>6&lo2)<<4 | (s1>>6&lo2)<<6
			for j := range 4 {
				sl[4*j+k] = byte(low >> (8 * j))
				sl[4*(j+4)+k] = byte(s2 >> (8 * j))
				sh[4*j+k] = byte(top >> (8 * j))
			}
			// Sub-block 2c takes the low nibbles of the 32 bytes at 32c,
			// 2c+1 the high ones. In the r4 layout run r of a sub-block
			// pairs weights (i, i+8), (i+16, i+24), (i+4, i+12),
			// (i+20, i+28) for i < 4 (nibblePairs), so one 8-byte word
			// pairing bytes j and j+8 holds runs 0 and 2 (or 1 and 3).
			for c := range 4 {
				q := x[q4KQs+32*c : q4KQs+32*c+32]
				a := binary.LittleEndian.Uint64(q[0:])
				b := binary.LittleEndian.Uint64(q[8:])
				d := binary.LittleEndian.Uint64(q[16:])
				e := binary.LittleEndian.Uint64(q[24:])
				putRuns(qs[64*(2*c)+4*k:], a&lo|(b&lo)<<4, d&lo|(e&lo)<<4)
				putRuns(qs[64*(2*c+1)+4*k:], a>>4&lo|b&^lo, d>>4&lo|e&^lo)
			}
		}
	}
}

// putRuns stores the four 4-byte runs of one row of an r4 sub-block:
// w02 holds runs 0 and 2, w13 runs 1 and 3; run r goes to 16*r.
func putRuns(o []byte, w02, w13 uint64) {
	o = o[:52]
	binary.LittleEndian.PutUint32(o[0:], uint32(w02))
	binary.LittleEndian.PutUint32(o[16:], uint32(w13))
	binary.LittleEndian.PutUint32(o[32:], uint32(w02>>32))
	binary.LittleEndian.PutUint32(o[48:], uint32(w13>>32))
}

// q4KR4Deinterleave is the inverse of q4KR4Interleave.
func q4KR4Deinterleave(base, group []byte, ne0 int) {
	nb := ne0 / qkK
	const lo = 0x0f0f0f0f0f0f0f0f
	for ibl := range nb {
		y := group[ibl*q4KR4Size : (ibl+1)*q4KR4Size]
		sh, sl, qs := y[16:32:32], y[32:64:64], y[64:576]
		for k := range 4 {
			x := base[(k*nb+ibl)*q4KSize : (k*nb+ibl+1)*q4KSize]
			x[q4KD], x[q4KD+1] = y[2*k], y[2*k+1]
			x[q4KDmin], x[q4KDmin+1] = y[2*(k+4)], y[2*(k+4)+1]
			var low, s2, top uint32
			for j := range 4 {
				low |= uint32(sl[4*j+k]) << (8 * j)
				s2 |= uint32(sl[4*(j+4)+k]) << (8 * j)
				top |= uint32(sh[4*j+k]) << (8 * j)
			}
			const lo4, lo2 = 0x0f0f0f0f, 0x03030303
			binary.LittleEndian.PutUint32(x[q4KScales:], low&lo4|(top&lo2)<<4|(top>>4&lo2)<<6)
			binary.LittleEndian.PutUint32(x[q4KScales+4:], low>>4&lo4|(top>>2&lo2)<<4|(top>>6&lo2)<<6)
			binary.LittleEndian.PutUint32(x[q4KScales+8:], s2)
			for c := range 4 {
				l02, l13 := getRuns(qs[64*(2*c)+4*k:])
				h02, h13 := getRuns(qs[64*(2*c+1)+4*k:])
				q := x[q4KQs+32*c : q4KQs+32*c+32]
				binary.LittleEndian.PutUint64(q[0:], l02&lo|(h02&lo)<<4)
				binary.LittleEndian.PutUint64(q[8:], l02>>4&lo|h02&^lo)
				binary.LittleEndian.PutUint64(q[16:], l13&lo|(h13&lo)<<4)
				binary.LittleEndian.PutUint64(q[24:], l13>>4&lo|h13&^lo)
			}
		}
	}
}

// getRuns is the inverse of putRuns.
func getRuns(o []byte) (w02, w13 uint64) {
	o = o[:52]
	w02 = uint64(binary.LittleEndian.Uint32(o[0:])) | uint64(binary.LittleEndian.Uint32(o[32:]))<<32
	w13 = uint64(binary.LittleEndian.Uint32(o[16:])) | uint64(binary.LittleEndian.Uint32(o[48:]))<<32
	return w02, w13
}
