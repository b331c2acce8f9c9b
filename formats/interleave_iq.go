package formats

import (
	"encoding/binary"

	"github.com/gquant/gquant/internal/tables"
)

// Row interleaving of the IQ grid types (iqk_quantize.cpp repack_iq*). Each
// interleaved block holds block ibl of 4 (iq4_xs_r8: 8) consecutive rows. The
// iq2_xxs, iq2_xs and iq3_xxs forms also recode their 7 sign bits through
// tables.ScrambledSign; the iq3_s form transposes its sign bits.

func init() {
	registerInterleaver(IQ4_NL_R4, interleaver{interleave: interleaveIQ4NL, deinterleave: deinterleaveIQ4NL})
	registerInterleaver(IQ4_XS_R8, interleaver{interleave: interleaveIQ4XS, deinterleave: deinterleaveIQ4XS})
	registerInterleaver(IQ2_XXS_R4, interleaver{interleave: interleaveIQ2XXS, deinterleave: deinterleaveIQ2XXS})
	registerInterleaver(IQ2_XS_R4, interleaver{interleave: interleaveIQ2XS, deinterleave: deinterleaveIQ2XS})
	registerInterleaver(IQ2_S_R4, interleaver{interleave: interleaveIQ2S, deinterleave: deinterleaveIQ2S})
	registerInterleaver(IQ3_XXS_R4, interleaver{interleave: interleaveIQ3XXS, deinterleave: deinterleaveIQ3XXS})
	registerInterleaver(IQ3_S_R4, interleaver{interleave: interleaveIQ3S, deinterleave: deinterleaveIQ3S})
}

// unscrambledSign inverts tables.ScrambledSign.
var unscrambledSign = func() (inv [128]uint8) {
	for s, v := range tables.ScrambledSign {
		inv[v] = uint8(s)
	}
	return
}()

// forBlocks calls f for every block index with the base blocks of the nrows
// rows and the interleaved block they share.
func forBlocks(group, base []byte, ne0, blockWeights, baseBlockBytes, nrows int, f func(y []byte, x [][]byte)) {
	nblock := ne0 / blockWeights
	rowBytes := nblock * baseBlockBytes
	gb := baseBlockBytes * nrows
	x := make([][]byte, nrows)
	for ib := 0; ib < nblock; ib++ {
		for k := range x {
			x[k] = base[k*rowBytes+ib*baseBlockBytes : k*rowBytes+(ib+1)*baseBlockBytes]
		}
		f(group[ib*gb:(ib+1)*gb], x)
	}
}

// copyScales moves the fp16 scale of every row to or from the front of the group block.
func copyScales(y []byte, x [][]byte, toGroup bool) {
	for k := range x {
		if toGroup {
			copy(y[2*k:2*k+2], x[k][:2])
		} else {
			copy(x[k][:2], y[2*k:2*k+2])
		}
	}
}

func interleaveIQ4NL(group, base []byte, ne0 int) {
	forBlocks(group, base, ne0, 32, 18, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, true)
		q := y[8:]
		for k := 0; k < 4; k++ {
			xq := x[k][2:]
			for i := 0; i < 4; i++ {
				q[4*k+i] = xq[i]&0xf | (xq[i+8]&0xf)<<4
				q[4*k+i+16] = xq[i]>>4 | xq[i+8]&0xf0
				q[4*k+i+32] = xq[i+4]&0xf | (xq[i+12]&0xf)<<4
				q[4*k+i+48] = xq[i+4]>>4 | xq[i+12]&0xf0
			}
		}
	})
}

func deinterleaveIQ4NL(base, group []byte, ne0 int) {
	forBlocks(group, base, ne0, 32, 18, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, false)
		q := y[8:]
		for k := 0; k < 4; k++ {
			xq := x[k][2:]
			for i := 0; i < 4; i++ {
				a, b, c, e := q[4*k+i], q[4*k+i+16], q[4*k+i+32], q[4*k+i+48]
				xq[i] = a&0xf | (b&0xf)<<4
				xq[i+8] = a>>4 | b&0xf0
				xq[i+4] = c&0xf | (e&0xf)<<4
				xq[i+12] = c>>4 | e&0xf0
			}
		}
	})
}

// iq4_xs_r8 block: d[8], scales_h[16], scales_l[32], qs[1024].
func interleaveIQ4XS(group, base []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 136, 8, func(y []byte, x [][]byte) {
		copyScales(y, x, true)
		sh, sl, q := y[16:32], y[32:64], y[64:]
		clear(sh)
		clear(sl)
		for k := 0; k < 8; k++ {
			xsh := binary.LittleEndian.Uint16(x[k][2:])
			xsl, xq := x[k][4:8], x[k][8:]
			for ib := 0; ib < 8; ib++ {
				l := xsl[ib/2] >> (4 * (ib % 2)) & 0xf
				h := uint8(xsh>>(2*ib)) & 3
				i := 8*ib + k
				sl[i%32] |= l << (4 * (i / 32))
				sh[i%16] |= h << (2 * (i / 16))
				for i := 0; i < 4; i++ {
					b := 16*ib + i
					q[128*ib+4*k+i] = xq[b]&0xf | (xq[b+4]&0xf)<<4
					q[128*ib+4*k+i+32] = xq[b+8]&0xf | (xq[b+12]&0xf)<<4
					q[128*ib+4*k+i+64] = xq[b]>>4 | (xq[b+4]>>4)<<4
					q[128*ib+4*k+i+96] = xq[b+8]>>4 | (xq[b+12]>>4)<<4
				}
			}
		}
	})
}

func deinterleaveIQ4XS(base, group []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 136, 8, func(y []byte, x [][]byte) {
		copyScales(y, x, false)
		sh, sl, q := y[16:32], y[32:64], y[64:]
		for k := 0; k < 8; k++ {
			var xsh uint16
			xsl, xq := x[k][4:8], x[k][8:]
			clear(xsl)
			for ib := 0; ib < 8; ib++ {
				i := 8*ib + k
				l := sl[i%32] >> (4 * (i / 32)) & 0xf
				h := sh[i%16] >> (2 * (i / 16)) & 3
				xsl[ib/2] |= l << (4 * (ib % 2))
				xsh |= uint16(h) << (2 * ib)
				for i := 0; i < 4; i++ {
					b := 16*ib + i
					a, c, e, f := q[128*ib+4*k+i], q[128*ib+4*k+i+32], q[128*ib+4*k+i+64], q[128*ib+4*k+i+96]
					xq[b] = a&0xf | (e&0xf)<<4
					xq[b+4] = a>>4 | (e>>4)<<4
					xq[b+8] = c&0xf | (f&0xf)<<4
					xq[b+12] = c>>4 | (f>>4)<<4
				}
			}
			binary.LittleEndian.PutUint16(x[k][2:], xsh)
		}
	})
}

// packSAS recodes one iq2_xxs/iq3_xxs signs-and-scale word (4x7 sign bits,
// 4-bit scale on top) into the _r4 form: per byte, the scrambled signs shifted
// up by one and one scale bit at the bottom.
func packSAS(aux uint32) uint32 {
	scale := aux >> 28
	var out uint32
	for m := 0; m < 4; m++ {
		s := uint32(tables.ScrambledSign[(aux>>(7*m))&127])<<1 | (scale>>m)&1
		out |= s << (8 * m)
	}
	return out
}

func unpackSAS(v uint32) uint32 {
	var aux, scale uint32
	for m := 0; m < 4; m++ {
		b := (v >> (8 * m)) & 0xff
		aux |= uint32(unscrambledSign[b>>1]) << (7 * m)
		scale |= (b & 1) << m
	}
	return aux | scale<<28
}

// iq2_xxs_r4 block: d[4], sas[128], qs[128].
func interleaveIQ2XXS(group, base []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 66, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, true)
		sas, q := y[8:136], y[136:264]
		for k := 0; k < 4; k++ {
			for ib := 0; ib < 8; ib++ {
				xb := x[k][2+8*ib:]
				putWord(q[16*ib+4*k:], xb)
				binary.LittleEndian.PutUint32(sas[4*(4*ib+k):], packSAS(binary.LittleEndian.Uint32(xb[4:])))
			}
		}
	})
}

func deinterleaveIQ2XXS(base, group []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 66, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, false)
		sas, q := y[8:136], y[136:264]
		for k := 0; k < 4; k++ {
			for ib := 0; ib < 8; ib++ {
				xb := x[k][2+8*ib:]
				putWord(xb, q[16*ib+4*k:])
				binary.LittleEndian.PutUint32(xb[4:], unpackSAS(binary.LittleEndian.Uint32(sas[4*(4*ib+k):])))
			}
		}
	})
}

// iq2_xs_r4 block: d[4], qs uint16[128], scales[32].
func interleaveIQ2XS(group, base []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 74, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, true)
		q, sc := y[8:264], y[264:296]
		for k := 0; k < 4; k++ {
			for ib := 0; ib < 8; ib++ {
				for i := 0; i < 4; i++ {
					v := binary.LittleEndian.Uint16(x[k][2+2*(4*ib+i):])
					binary.LittleEndian.PutUint16(q[2*(16*ib+4*k+i):], v&511|uint16(tables.ScrambledSign[v>>9])<<9)
				}
				sc[4*ib+k] = x[k][66+ib]
			}
		}
	})
}

func deinterleaveIQ2XS(base, group []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 74, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, false)
		q, sc := y[8:264], y[264:296]
		for k := 0; k < 4; k++ {
			for ib := 0; ib < 8; ib++ {
				for i := 0; i < 4; i++ {
					v := binary.LittleEndian.Uint16(q[2*(16*ib+4*k+i):])
					binary.LittleEndian.PutUint16(x[k][2+2*(4*ib+i):], v&511|uint16(unscrambledSign[v>>9])<<9)
				}
				x[k][66+ib] = sc[4*ib+k]
			}
		}
	})
}

// iq2_s base block: d, qs[32], signs[32], qh[8], scales[8].
// iq2_s_r4 block: d[4], qs[128], qh[32], signs[128], scales[32].
func shuffleIQ2S(y []byte, x [][]byte, toGroup bool) {
	copyScales(y, x, toGroup)
	q, qh, signs, sc := y[8:136], y[136:168], y[168:296], y[296:328]
	mv := func(g, b *byte) {
		if toGroup {
			*g = *b
		} else {
			*b = *g
		}
	}
	for k := 0; k < 4; k++ {
		xb := x[k]
		for ib := 0; ib < 8; ib++ {
			mv(&sc[4*ib+k], &xb[74+ib])
			for i := 0; i < 4; i++ {
				mv(&q[16*ib+4*k+i], &xb[2+4*ib+i])
				mv(&signs[16*ib+4*k+i], &xb[34+4*ib+i])
			}
			mv(&qh[4*ib+k], &xb[66+ib])
		}
	}
}

func interleaveIQ2S(group, base []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 82, 4, func(y []byte, x [][]byte) { shuffleIQ2S(y, x, true) })
}

func deinterleaveIQ2S(base, group []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 82, 4, func(y []byte, x [][]byte) { shuffleIQ2S(y, x, false) })
}

// iq3_xxs base block: d, qs[64], sas[32]. iq3_xxs_r4 block: d[4], sas[128], qs[256].
func interleaveIQ3XXS(group, base []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 98, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, true)
		sas, q := y[8:136], y[136:392]
		for k := 0; k < 4; k++ {
			for ib := 0; ib < 8; ib++ {
				copy(q[32*ib+8*k:32*ib+8*k+8], x[k][2+8*ib:])
				binary.LittleEndian.PutUint32(sas[4*(4*ib+k):], packSAS(binary.LittleEndian.Uint32(x[k][66+4*ib:])))
			}
		}
	})
}

func deinterleaveIQ3XXS(base, group []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 98, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, false)
		sas, q := y[8:136], y[136:392]
		for k := 0; k < 4; k++ {
			for ib := 0; ib < 8; ib++ {
				copy(x[k][2+8*ib:2+8*ib+8], q[32*ib+8*k:])
				binary.LittleEndian.PutUint32(x[k][66+4*ib:], unpackSAS(binary.LittleEndian.Uint32(sas[4*(4*ib+k):])))
			}
		}
	})
}

// iq3_s base block: d, qs[64], qh[8], signs[32], scales[4].
// iq3_s_r4 block: d[4], qs[256], qh[32], signs[128], scales[16].
func interleaveIQ3S(group, base []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 110, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, true)
		q, qh, signs, sc := y[8:264], y[264:296], y[296:424], y[424:440]
		clear(sc)
		for k := 0; k < 4; k++ {
			xq, xqh, xs, xsc := x[k][2:66], x[k][66:74], x[k][74:106], x[k][106:110]
			for ib := 0; ib < 4; ib++ {
				j := 8*ib + k
				sc[j%16] |= (xsc[ib] & 0xf) << (4 * (j / 16))
				sc[(j+4)%16] |= (xsc[ib] >> 4) << (4 * ((j + 4) / 16))
			}
			for ib := 0; ib < 8; ib++ {
				qh[4*ib+k] = xqh[ib]
				for i := 0; i < 4; i++ {
					q[32*ib+k+8*i] = xq[8*ib+i]
					q[32*ib+k+8*i+4] = xq[8*ib+i+4]
				}
				for i := 0; i < 4; i++ {
					var s uint8
					for m := 0; m < 4; m++ {
						s |= (xs[4*ib+m]>>i&1)<<(2*m) | (xs[4*ib+m]>>(4+i)&1)<<(2*m+1)
					}
					signs[16*ib+4*k+i] = s
				}
			}
		}
	})
}

func deinterleaveIQ3S(base, group []byte, ne0 int) {
	forBlocks(group, base, ne0, iqSuper, 110, 4, func(y []byte, x [][]byte) {
		copyScales(y, x, false)
		q, qh, signs, sc := y[8:264], y[264:296], y[296:424], y[424:440]
		for k := 0; k < 4; k++ {
			xq, xqh, xs, xsc := x[k][2:66], x[k][66:74], x[k][74:106], x[k][106:110]
			for ib := 0; ib < 4; ib++ {
				j := 8*ib + k
				lo := sc[j%16] >> (4 * (j / 16)) & 0xf
				hi := sc[(j+4)%16] >> (4 * ((j + 4) / 16)) & 0xf
				xsc[ib] = lo | hi<<4
			}
			clear(xs)
			for ib := 0; ib < 8; ib++ {
				xqh[ib] = qh[4*ib+k]
				for i := 0; i < 4; i++ {
					xq[8*ib+i] = q[32*ib+k+8*i]
					xq[8*ib+i+4] = q[32*ib+k+8*i+4]
				}
				for i := 0; i < 4; i++ {
					s := signs[16*ib+4*k+i]
					for m := 0; m < 4; m++ {
						xs[4*ib+m] |= (s>>(2*m)&1)<<i | (s>>(2*m+1)&1)<<(4+i)
					}
				}
			}
		}
	})
}
