package formats

import "encoding/binary"

// Row interleaving of the 32-weight block types, mxfp4, bf16 and q8_KV
// (the reference's repack_q4_0, repack_q8_0, repack_q5_0, repack_q6_0,
// repack_mxfp4, repack_bf16 and repack_q8_KV, and ggml-aarch64.c's ARM
// q4_0 repacks). Each is a lossless rearrangement: interleave and
// deinterleave are exact inverses.

func init() {
	registerInterleaver(Q4_0_R8, chunkInterleaver(8, 2, 16, 32))
	registerInterleaver(Q8_0_R8, chunkInterleaver(8, 2, 32, 32))
	registerInterleaver(MXFP4_R8, chunkInterleaver(8, 1, 16, 32))
	registerInterleaver(BF16_R16, interleaver{interleave: interleaveBF16R16, deinterleave: deinterleaveBF16R16, rowMultiple: 2})
	registerInterleaver(Q5_0_R4, interleaver{interleave: interleaveQ5_0R4, deinterleave: deinterleaveQ5_0R4})
	registerInterleaver(Q6_0_R4, interleaver{interleave: interleaveQ6_0R4, deinterleave: deinterleaveQ6_0R4})
	registerInterleaver(Q8_KV_R8, interleaver{interleave: interleaveQ8KVR8, deinterleave: deinterleaveQ8KVR8})
	registerInterleaver(Q4_0_4X4, armQ4_0Interleaver(4, 4))
	registerInterleaver(Q4_0_4X8, armQ4_0Interleaver(4, 8))
	registerInterleaver(Q4_0_8X8, armQ4_0Interleaver(8, 8))
}

// armQ4_0Interleaver is the layout of the ARM repacks of q4_0 (the
// reference's make_block_q4_0x4 and make_block_q4_0x8): for each block
// column, the rows' fp16 scales in row order, then their quant bytes in
// chunks of chunk bytes, chunk c of row k at chunk*(rows*c+k), each byte
// XOR 0x88 so that both nibbles hold a signed value (q-8 in two's
// complement) instead of an offset one. XOR is its own inverse, so
// deinterleaving applies it again.
func armQ4_0Interleaver(rows, chunk int) interleaver {
	const bs, hdr = 18, 2
	// One block column of the rows at a time: headers, then the quant
	// bytes as words (8- or 4-byte chunks), each XOR 0x88 in every byte.
	return interleaver{
		interleave: func(group, base []byte, ne0 int) {
			nb := ne0 / 32
			for ib := range nb {
				y := group[ib*rows*bs : (ib+1)*rows*bs]
				q := y[rows*hdr:]
				for k := range rows {
					x := base[(k*nb+ib)*bs : (k*nb+ib+1)*bs]
					moveHeader(y[k*hdr:(k+1)*hdr], x[:hdr])
					if chunk == 8 {
						armMove8(q[8*k:], x[hdr:])
						armMove8(q[8*(rows+k):], x[hdr+8:])
					} else {
						for c := range 4 {
							armMove4(q[4*(rows*c+k):], x[hdr+4*c:])
						}
					}
				}
			}
		},
		deinterleave: func(base, group []byte, ne0 int) {
			nb := ne0 / 32
			for ib := range nb {
				y := group[ib*rows*bs : (ib+1)*rows*bs]
				q := y[rows*hdr:]
				for k := range rows {
					x := base[(k*nb+ib)*bs : (k*nb+ib+1)*bs]
					moveHeader(x[:hdr], y[k*hdr:(k+1)*hdr])
					if chunk == 8 {
						armMove8(x[hdr:], q[8*k:])
						armMove8(x[hdr+8:], q[8*(rows+k):])
					} else {
						for c := range 4 {
							armMove4(x[hdr+4*c:], q[4*(rows*c+k):])
						}
					}
				}
			}
		},
	}
}

// armMove8 and armMove4 copy a chunk of quant bytes with each byte XOR
// 0x88 (the ARM repacks' signed nibbles; XOR is its own inverse).
func armMove8(dst, src []byte) {
	binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)^0x8888888888888888)
}

func armMove4(dst, src []byte) {
	binary.LittleEndian.PutUint32(dst, binary.LittleEndian.Uint32(src)^0x88888888)
}

// chunkInterleaver handles the layouts where rows blocks of hdr header bytes
// and qbytes quant bytes (blockWeights weights) become one block holding the
// rows headers in row order, then the quant bytes in 4-byte chunks, chunk c
// of row k at 4*(rows*c+k). The chunks move as words: a copy() of 4 bytes
// is a call to memmove, which made q8_0_r8's interleave cost three times
// its quantization.
func chunkInterleaver(rows, hdr, qbytes, blockWeights int) interleaver {
	bs := hdr + qbytes
	words := qbytes / 4
	return interleaver{
		interleave: func(group, base []byte, ne0 int) {
			nb := ne0 / blockWeights
			if rows == 8 && interleaveRows8SIMD(group, base, nb*bs, nb, hdr, words) {
				return
			}
			xs := make([][]byte, rows)
			for ib := range nb {
				y := group[ib*rows*bs : (ib+1)*rows*bs]
				for k := range xs {
					xs[k] = base[(k*nb+ib)*bs : (k*nb+ib+1)*bs]
					moveHeader(y[k*hdr:(k+1)*hdr], xs[k][:hdr])
				}
				// The block's output in order, a word from each row in turn.
				q := y[rows*hdr:]
				for c := range words {
					for _, x := range xs {
						putWord(q, x[hdr+4*c:])
						q = q[4:]
					}
				}
			}
		},
		deinterleave: func(base, group []byte, ne0 int) {
			nb := ne0 / blockWeights
			for ib := range nb {
				y := group[ib*rows*bs : (ib+1)*rows*bs]
				q := y[rows*hdr:]
				for k := range rows {
					x := base[(k*nb+ib)*bs : (k*nb+ib+1)*bs]
					moveHeader(x[:hdr], y[k*hdr:(k+1)*hdr])
					for c := range words {
						putWord(x[hdr+4*c:], q[4*(rows*c+k):])
					}
				}
			}
		},
	}
}

// putWord copies the 4 bytes at src to dst with one load and one store.
func putWord(dst, src []byte) {
	binary.LittleEndian.PutUint32(dst, binary.LittleEndian.Uint32(src))
}

// moveHeader copies a block header, with plain stores for the 1- and 2-byte
// ones (a scale) instead of a memmove call.
func moveHeader(dst, src []byte) {
	switch len(src) {
	case 1:
		dst[0] = src[0]
	case 2:
		binary.LittleEndian.PutUint16(dst, binary.LittleEndian.Uint16(src))
	default:
		copy(dst, src)
	}
}

// bf16_r16: 16 rows, pairs of weights interleaved: pair p of row k at
// 4*(16*p+k). The reference asserts an even row length.
func interleaveBF16R16(group, base []byte, ne0 int) {
	for k := range 16 {
		x := base[2*k*ne0 : 2*(k+1)*ne0]
		for p := range ne0 / 2 {
			putWord(group[4*(16*p+k):], x[4*p:])
		}
	}
}

func deinterleaveBF16R16(base, group []byte, ne0 int) {
	for k := range 16 {
		x := base[2*k*ne0 : 2*(k+1)*ne0]
		for p := range ne0 / 2 {
			putWord(x[4*p:], group[4*(16*p+k):])
		}
	}
}

// The r4 layouts of q5_0 / q6_0 store, for row k and quad i of each of the
// four stretches l, weight i+lo(l) in the low and i+lo(l)+8 in the high
// nibble of qs[4k+i+16l], where lo(l) = 4*(l/2) + 16*(l%2).
func r4QuadBase(l int) int { return 4*(l/2) + 16*(l%2) }

// q5_0Pack stores the quant values (0..31) of one block, in weight order.
func q5_0Pack(x []byte, q *[32]uint8) {
	var qh uint32
	for j := range 16 {
		x[6+j] = q[j]&0xf | q[j+16]<<4
		qh |= uint32(q[j]>>4)<<j | uint32(q[j+16]>>4)<<(j+16)
	}
	binary.LittleEndian.PutUint32(x[2:], qh)
}

// q5_0_r4 block: fp16 d[4], qh[16], qs[64]; the fifth bits of qs[4k+i+16l]
// are bits l (low nibble) and l+4 (high) of qh[4k+i].
func interleaveQ5_0R4(group, base []byte, ne0 int) {
	const bs, gs = 22, 88
	const lo4 = 0x0f0f0f0f
	nb := ne0 / 32
	for ib := range nb {
		y := group[ib*gs : (ib+1)*gs]
		for k := range 4 {
			x := base[(k*nb+ib)*bs : (k*nb+ib+1)*bs]
			moveHeader(y[2*k:2*k+2], x[:2])
			// Stretch l of row k holds, for i = 0..3, weight i+lo(l) in the
			// low nibble and i+lo(l)+8 in the high one; weights j and j+16
			// share byte x[6+j%16]. So the stretches are nibble halves of
			// four words of the row's quant bytes.
			a0 := binary.LittleEndian.Uint32(x[6:])  // weights 0..3, 16..19
			a1 := binary.LittleEndian.Uint32(x[10:]) // 4..7, 20..23
			b0 := binary.LittleEndian.Uint32(x[14:]) // 8..11, 24..27
			b1 := binary.LittleEndian.Uint32(x[18:]) // 12..15, 28..31
			q := y[24+4*k:]
			binary.LittleEndian.PutUint32(q[0:], a0&lo4|(b0&lo4)<<4)
			binary.LittleEndian.PutUint32(q[16:], a0>>4&lo4|b0&^lo4)
			binary.LittleEndian.PutUint32(q[32:], a1&lo4|(b1&lo4)<<4)
			binary.LittleEndian.PutUint32(q[48:], a1>>4&lo4|b1&^lo4)
			// Byte i of the row's fifth bits: bit l from weight i+lo(l),
			// bit l+4 from weight i+lo(l)+8.
			h := binary.LittleEndian.Uint32(x[2:])
			for i := range 4 {
				hi := h >> i
				y[8+4*k+i] = byte(hi&1 | hi>>16&1<<1 | hi>>4&1<<2 | hi>>20&1<<3 |
					hi>>8&1<<4 | hi>>24&1<<5 | hi>>12&1<<6 | hi>>28&1<<7)
			}
		}
	}
}

func deinterleaveQ5_0R4(base, group []byte, ne0 int) {
	const bs, gs = 22, 88
	nb := ne0 / 32
	var q [32]uint8
	for ib := range nb {
		y := group[ib*gs : (ib+1)*gs]
		for k := range 4 {
			x := base[(k*nb+ib)*bs : (k*nb+ib+1)*bs]
			copy(x[:2], y[2*k:2*k+2])
			for l := range 4 {
				lo := r4QuadBase(l)
				for i := range 4 {
					qs, qh := y[24+4*k+i+16*l], y[8+4*k+i]
					q[i+lo] = qs&0xf | (qh>>l&1)<<4
					q[i+lo+8] = qs>>4 | (qh>>(l+4)&1)<<4
				}
			}
			q5_0Pack(x, &q)
		}
	}
}

// q6_0 quant values (0..63) of one block, in weight order.
func q6_0Unpack(x []byte, q *[32]uint8) {
	for j := range 16 {
		h := x[2+j%8] >> (4 * (j / 8))
		q[j] = x[10+j]&0xf | (h&3)<<4
		q[j+16] = x[10+j]>>4 | (h>>2&3)<<4
	}
}

func q6_0Pack(x []byte, q *[32]uint8) {
	clear(x[2:10])
	for j := range 16 {
		x[10+j] = q[j]&0xf | q[j+16]<<4
		x[2+j%8] |= (q[j]>>4 | (q[j+16]>>4)<<2) << (4 * (j / 8))
	}
}

// q6_0_r4 block: fp16 d[4], qh[32], qs[64]; the top bit pairs of
// qs[4k+i+16l] sit in qh[4k+i+16*(l%2)] at bits 2*(l/2) (low nibble) and
// 2*(l/2)+4 (high).
func interleaveQ6_0R4(group, base []byte, ne0 int) {
	const bs, gs = 26, 104
	nb := ne0 / 32
	var q [32]uint8
	for ib := range nb {
		y := group[ib*gs : (ib+1)*gs]
		clear(y[8:40])
		for k := range 4 {
			x := base[(k*nb+ib)*bs : (k*nb+ib+1)*bs]
			copy(y[2*k:2*k+2], x[:2])
			q6_0Unpack(x, &q)
			for l := range 4 {
				lo := r4QuadBase(l)
				for i := range 4 {
					a, b := q[i+lo], q[i+lo+8]
					y[40+4*k+i+16*l] = a&0xf | b<<4
					y[8+4*k+i+16*(l%2)] |= (a>>4 | (b>>4)<<4) << (2 * (l / 2))
				}
			}
		}
	}
}

func deinterleaveQ6_0R4(base, group []byte, ne0 int) {
	const bs, gs = 26, 104
	nb := ne0 / 32
	var q [32]uint8
	for ib := range nb {
		y := group[ib*gs : (ib+1)*gs]
		for k := range 4 {
			x := base[(k*nb+ib)*bs : (k*nb+ib+1)*bs]
			copy(x[:2], y[2*k:2*k+2])
			for l := range 4 {
				lo := r4QuadBase(l)
				for i := range 4 {
					qs := y[40+4*k+i+16*l]
					h := y[8+4*k+i+16*(l%2)] >> (2 * (l / 2))
					q[i+lo] = qs&0xf | (h&3)<<4
					q[i+lo+8] = qs>>4 | (h>>4&3)<<4
				}
			}
			q6_0Pack(x, &q)
		}
	}
}

// q8_KV rows carry float32 d and the int32 sum of their quants; q8_KV_r8
// keeps only the 8 d values, then the quants in 4-byte chunks, chunk c of
// row k at 4*(8*c+k). Deinterleaving recomputes the sums, which the
// reference's quantizer stores as the plain sum of the int8 quants.
func interleaveQ8KVR8(group, base []byte, ne0 int) {
	row := 8 + ne0
	if ne0%32 == 0 && len(base) >= 8*row && len(group) >= 32 &&
		interleaveRows8SIMD(group[32:], base[8:], row, ne0/32, 0, 8) {
		for k := range 8 {
			putWord(group[4*k:], base[k*row:])
		}
		return
	}
	for k := range 8 {
		x := base[k*row : (k+1)*row]
		putWord(group[4*k:], x)
		for c := range ne0 / 4 {
			putWord(group[32+4*(8*c+k):], x[8+4*c:])
		}
	}
}

func deinterleaveQ8KVR8(base, group []byte, ne0 int) {
	row := 8 + ne0
	for k := range 8 {
		x := base[k*row : (k+1)*row]
		putWord(x, group[4*k:])
		for c := range ne0 / 4 {
			putWord(x[8+4*c:], group[32+4*(8*c+k):])
		}
		var sum int32
		for _, q := range x[8:] {
			sum += int32(int8(q))
		}
		binary.LittleEndian.PutUint32(x[4:], uint32(sum))
	}
}
