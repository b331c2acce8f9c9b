package formats

import "encoding/binary"

// Direct q6_K <-> q6_k_r4 conversions, eight bytes at a time, giving the
// same bytes as the generic kInterleaver (TestKR4FastMatchesGeneric).
// q6_K is the other k-quant of q4_K_M and q5_K_M models (ffn_down,
// attn_v, output), so repack meets it as often as q4_K.

const q6KR4Size = 840

// In a q6_K half (128 weights: ql[64*h:], qh[32*h:]) sub-block t of the
// half takes the low nibbles of ql[32*(t%2):] for t < 2, the high ones for
// t >= 2, and the bit pair at 2t of qh[0:32].

// q6KTops packs the top bit pairs of one r4 sub-block row from the qh
// bytes j (and j+8) of its half for sub-block t: output byte i holds
// weights i, i+8, i+4, i+12 at bits 0, 2, 4, 6.
func q6KTops(q0, q1 uint64, t int) uint32 {
	const m3 = 0x0303030303030303
	c := q0>>(2*t)&m3 | (q1>>(2*t)&m3)<<2
	return uint32(c)&0x0f0f0f0f | uint32(c>>32)<<4
}

// q6KR4Interleave writes the q6_k_r4 blocks of 4 q6_K rows of ne0 weights.
func q6KR4Interleave(group, base []byte, ne0 int) {
	nb := ne0 / qkK
	const lo = 0x0f0f0f0f0f0f0f0f
	for ibl := range nb {
		y := group[ibl*q6KR4Size : (ibl+1)*q6KR4Size]
		scales, qh, ql := y[8:72:72], y[72:328:328], y[328:840]
		for k := range 4 {
			x := base[(k*nb+ibl)*q6KSize : (k*nb+ibl+1)*q6KSize]
			y[2*k], y[2*k+1] = x[q6KD], x[q6KD+1]
			for ib := range 8 {
				scales[8*ib+k] = x[q6KScales+2*ib]
				scales[8*ib+k+4] = x[q6KScales+2*ib+1]
			}
			for h := range 2 {
				hb := x[q6KQh+32*h : q6KQh+32*h+32]
				q0 := binary.LittleEndian.Uint64(hb[0:])
				q1 := binary.LittleEndian.Uint64(hb[8:])
				q2 := binary.LittleEndian.Uint64(hb[16:])
				q3 := binary.LittleEndian.Uint64(hb[24:])
				for t := range 4 {
					o := qh[32*(4*h+t)+4*k:]
					binary.LittleEndian.PutUint32(o[0:], q6KTops(q0, q1, t))
					binary.LittleEndian.PutUint32(o[16:], q6KTops(q2, q3, t))
				}
				for s := range 2 {
					q := x[q6KQl+64*h+32*s : q6KQl+64*h+32*s+32]
					a := binary.LittleEndian.Uint64(q[0:])
					b := binary.LittleEndian.Uint64(q[8:])
					d := binary.LittleEndian.Uint64(q[16:])
					e := binary.LittleEndian.Uint64(q[24:])
					putRuns(ql[64*(4*h+s)+4*k:], a&lo|(b&lo)<<4, d&lo|(e&lo)<<4)
					putRuns(ql[64*(4*h+2+s)+4*k:], a>>4&lo|b&^lo, d>>4&lo|e&^lo)
				}
			}
		}
	}
}

// q6KUntops is the inverse of q6KTops: the bit pairs of qh bytes 0-7 and
// 8-15 for sub-block t, each at bit 0 of its byte lane.
func q6KUntops(v uint32) (a, b uint64) {
	const m3 = 0x0303030303030303
	c := uint64(v&0x0f0f0f0f) | uint64(v>>4&0x0f0f0f0f)<<32
	return c & m3, c >> 2 & m3
}

// q6KR4Deinterleave is the inverse of q6KR4Interleave.
func q6KR4Deinterleave(base, group []byte, ne0 int) {
	nb := ne0 / qkK
	const lo = 0x0f0f0f0f0f0f0f0f
	for ibl := range nb {
		y := group[ibl*q6KR4Size : (ibl+1)*q6KR4Size]
		scales, qh, ql := y[8:72:72], y[72:328:328], y[328:840]
		for k := range 4 {
			x := base[(k*nb+ibl)*q6KSize : (k*nb+ibl+1)*q6KSize]
			x[q6KD], x[q6KD+1] = y[2*k], y[2*k+1]
			for ib := range 8 {
				x[q6KScales+2*ib] = scales[8*ib+k]
				x[q6KScales+2*ib+1] = scales[8*ib+k+4]
			}
			for h := range 2 {
				var q0, q1, q2, q3 uint64
				for t := range 4 {
					o := qh[32*(4*h+t)+4*k:]
					a, b := q6KUntops(binary.LittleEndian.Uint32(o[0:]))
					c, d := q6KUntops(binary.LittleEndian.Uint32(o[16:]))
					q0 |= a << (2 * t)
					q1 |= b << (2 * t)
					q2 |= c << (2 * t)
					q3 |= d << (2 * t)
				}
				hb := x[q6KQh+32*h : q6KQh+32*h+32]
				binary.LittleEndian.PutUint64(hb[0:], q0)
				binary.LittleEndian.PutUint64(hb[8:], q1)
				binary.LittleEndian.PutUint64(hb[16:], q2)
				binary.LittleEndian.PutUint64(hb[24:], q3)
				for s := range 2 {
					l02, l13 := getRuns(ql[64*(4*h+s)+4*k:])
					h02, h13 := getRuns(ql[64*(4*h+2+s)+4*k:])
					q := x[q6KQl+64*h+32*s : q6KQl+64*h+32*s+32]
					binary.LittleEndian.PutUint64(q[0:], l02&lo|(h02&lo)<<4)
					binary.LittleEndian.PutUint64(q[8:], l02>>4&lo|h02&^lo)
					binary.LittleEndian.PutUint64(q[16:], l13&lo|(h13&lo)<<4)
					binary.LittleEndian.PutUint64(q[24:], l13>>4&lo|h13&^lo)
				}
			}
		}
	}
}
