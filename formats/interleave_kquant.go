package formats

import "encoding/binary"

// Row interleaving of the k-quants into their _r4 layouts (the reference's
// repack_q2_k .. repack_q6_k). Each base block is unpacked into its quant
// values (one byte per weight) and 6-bit scales, which are then packed the
// other way; every bit of either layout is used, so interleave and
// deinterleave are exact inverses. q4_K and q6_K, the common ones, also
// have direct converters that move eight bytes at a time
// (interleave_q4k_fast.go, interleave_q6k_fast.go), registered instead.

func init() {
	registerInterleaver(Q2_K_R4, kInterleaver(q2KSize, 336, q2KUnpack, q2KPack, q2KR4Put, q2KR4Get))
	registerInterleaver(Q3_K_R4, kInterleaver(q3KSize, 440, q3KUnpack, q3KPack, q3KR4Put, q3KR4Get))
	q4K := kInterleaver(q4KSize, q4KR4Size, q4KUnpack, q4KPack, q4KR4Put, q4KR4Get)
	q4K.interleave, q4K.deinterleave = q4KR4Interleave, q4KR4Deinterleave // interleave_q4k_fast.go
	registerInterleaver(Q4_K_R4, q4K)
	registerInterleaver(Q5_K_R4, kInterleaver(q5KSize, 704, q5KUnpack, q5KPack, q5KR4Put, q5KR4Get))
	q6K := kInterleaver(q6KSize, q6KR4Size, q6KUnpack, q6KPack, q6KR4Put, q6KR4Get)
	q6K.interleave, q6K.deinterleave = q6KR4Interleave, q6KR4Deinterleave // interleave_q6k_fast.go
	registerInterleaver(Q6_K_R4, q6K)
}

// kBlock is one row's super-block, unpacked.
type kBlock struct {
	d, dmin [2]byte    // raw fp16 scales (dmin unused by q3_K and q6_K)
	q       [qkK]uint8 // quant of each weight
	sc, m   [16]uint8  // 6-bit sub-block scales and mins (q4_K/q5_K use 8 of each)
	isc     [16]int8   // q6_K int8 scales
	raw     [16]uint8  // q2_K scale bytes, kept as they are
}

// kInterleaver builds an interleaver for 4 rows of a k-quant from the
// unpack/pack functions of the base block (bs bytes) and the put/get
// functions that place one row into an r4 block (gs bytes).
func kInterleaver(bs, gs int,
	unpack func(x []byte, b *kBlock), pack func(x []byte, b *kBlock),
	put func(y []byte, k int, b *kBlock), get func(y []byte, k int, b *kBlock)) interleaver {
	return interleaver{
		interleave: func(group, base []byte, ne0 int) {
			nb := ne0 / qkK
			var b kBlock
			for ibl := range nb {
				y := group[ibl*gs : (ibl+1)*gs]
				clear(y)
				for k := range 4 {
					unpack(base[(k*nb+ibl)*bs:(k*nb+ibl+1)*bs], &b)
					put(y, k, &b)
				}
			}
		},
		deinterleave: func(base, group []byte, ne0 int) {
			nb := ne0 / qkK
			var b kBlock
			for ibl := range nb {
				y := group[ibl*gs : (ibl+1)*gs]
				for k := range 4 {
					get(y, k, &b)
					pack(base[(k*nb+ibl)*bs:(k*nb+ibl+1)*bs], &b)
				}
			}
		},
	}
}

// In the r4 layouts each 32-weight sub-block ib of row k takes 4-byte quads
// at 4k+i (i < 4). 2-bit quants: the byte for quad i holds weights
// i, i+4, i+8, i+12 (first 16 bytes) and i+16 .. i+28 (next 16) in bit pairs.
func putQuads2(qs []byte, k int, q *[qkK]uint8, mask uint8) {
	// Four quads at a time: byte i of word t of a sub-block is weight 4t+i.
	m := uint32(mask) * 0x01010101
	for ib := range qkK / 32 {
		w := q[32*ib:]
		word := func(t int) uint32 { return binary.LittleEndian.Uint32(w[4*t:]) & m }
		binary.LittleEndian.PutUint32(qs[32*ib+4*k:], word(0)|word(1)<<2|word(2)<<4|word(3)<<6)
		binary.LittleEndian.PutUint32(qs[32*ib+4*k+16:], word(4)|word(5)<<2|word(6)<<4|word(7)<<6)
	}
}

func getQuads2(qs []byte, k int, q *[qkK]uint8) {
	for ib := range qkK / 32 {
		w := q[32*ib:]
		for i := range 4 {
			a, b := qs[32*ib+4*k+i], qs[32*ib+4*k+i+16]
			for t := range 4 {
				w[i+4*t] = a >> (2 * t) & 3
				w[i+16+4*t] = b >> (2 * t) & 3
			}
		}
	}
}

// nibblePairs lists, for the four 16-byte runs of a 4-bit r4 sub-block, the
// weight offsets in the low and high nibble.
var nibblePairs = [4][2]int{{0, 8}, {16, 24}, {4, 12}, {20, 28}}

func putNibbles(qs []byte, k int, q *[qkK]uint8) {
	for ib := range qkK / 32 {
		w := q[32*ib:]
		for r, p := range nibblePairs {
			for i := range 4 {
				qs[64*ib+4*k+i+16*r] = w[i+p[0]]&0xf | (w[i+p[1]]&0xf)<<4
			}
		}
	}
}

// getNibbles sets the low 4 bits of q and clears the rest.
func getNibbles(qs []byte, k int, q *[qkK]uint8) {
	for ib := range qkK / 32 {
		w := q[32*ib:]
		for r, p := range nibblePairs {
			for i := range 4 {
				v := qs[64*ib+4*k+i+16*r]
				w[i+p[0]] = v & 0xf
				w[i+p[1]] = v >> 4
			}
		}
	}
}

// --- q2_K ---

func q2KUnpack(x []byte, b *kBlock) {
	copy(b.raw[:], x[q2KScales:q2KScales+16])
	copy(b.d[:], x[q2KD:])
	copy(b.dmin[:], x[q2KDmin:])
	for half := range 2 {
		qs := x[q2KQs+32*half:]
		for l := range 32 {
			for j := range 4 {
				b.q[128*half+32*j+l] = qs[l] >> (2 * j) & 3
			}
		}
	}
}

func q2KPack(x []byte, b *kBlock) {
	copy(x[q2KScales:q2KScales+16], b.raw[:])
	copy(x[q2KD:q2KD+2], b.d[:])
	copy(x[q2KDmin:q2KDmin+2], b.dmin[:])
	for half := range 2 {
		w := b.q[128*half:]
		for l := range 32 {
			x[q2KQs+32*half+l] = w[l] | w[l+32]<<2 | w[l+64]<<4 | w[l+96]<<6
		}
	}
}

// q2_k_r4 block: fp16 d[4], dmin[4], scales[64] (scale byte ib of row k at
// 4*ib+k), qs[256].
func q2KR4Put(y []byte, k int, b *kBlock) {
	copy(y[2*k:], b.d[:])
	copy(y[2*(k+4):], b.dmin[:])
	for ib := range 16 {
		y[16+4*ib+k] = b.raw[ib]
	}
	putQuads2(y[80:], k, &b.q, 3)
}

func q2KR4Get(y []byte, k int, b *kBlock) {
	copy(b.d[:], y[2*k:])
	copy(b.dmin[:], y[2*(k+4):])
	for ib := range 16 {
		b.raw[ib] = y[16+4*ib+k]
	}
	getQuads2(y[80:], k, &b.q)
}

// --- q3_K ---

func q3KUnpack(x []byte, b *kBlock) {
	copy(b.d[:], x[q3KD:])
	b.sc = q3KUnpackScales(x[q3KScales:])
	// Eight weights to a word: bit pair j of the quant bytes and bit
	// 4*half+j of the mask bytes, for the same eight l.
	const ones = 0x0101010101010101
	for half := range 2 {
		for l := 0; l < 32; l += 8 {
			qs := binary.LittleEndian.Uint64(x[q3KQs+32*half+l:])
			hm := binary.LittleEndian.Uint64(x[q3KHmask+l:]) >> (4 * half)
			for j := range 4 {
				binary.LittleEndian.PutUint64(b.q[128*half+32*j+l:], qs>>(2*j)&(3*ones)|(hm>>j&ones)<<2)
			}
		}
	}
}

func q3KPack(x []byte, b *kBlock) {
	copy(x[q3KD:q3KD+2], b.d[:])
	q3KPackScales(x[q3KScales:], &b.sc)
	clear(x[q3KHmask : q3KHmask+32])
	for half := range 2 {
		w := b.q[128*half:]
		for l := range 32 {
			x[q3KQs+32*half+l] = w[l]&3 | (w[l+32]&3)<<2 | (w[l+64]&3)<<4 | (w[l+96]&3)<<6
			for j := range 4 {
				x[q3KHmask+l] |= (w[32*j+l] >> 2) << (4*half + j)
			}
		}
	}
}

// q3_k_r4 block: fp16 d[4], scales_h[16], scales_l[32], qh[128], qs[256].
// Scale s (0..15) of row k has index is = 8*(s/2)+k+4*(s%2): low nibble in
// scales_l[is%32] at 4*(is/32), top bits in scales_h[is%16] at 2*(is/16).
// qh[16*ib+4k+i] bit t is the third bit of weight 32*ib+i+4t.
func q3KR4Put(y []byte, k int, b *kBlock) {
	copy(y[2*k:], b.d[:])
	for s := range 16 {
		is := 8*(s/2) + k + 4*(s%2)
		y[24+is%32] |= (b.sc[s] & 0xf) << (4 * (is / 32))
		y[8+is%16] |= (b.sc[s] >> 4) << (2 * (is / 16))
	}
	// The four bytes i = 0..3 at once: bit t of byte i is the third bit of
	// weight i+4t, byte i of word t.
	for ib := range 8 {
		w := b.q[32*ib:]
		var h uint32
		for t := range 8 {
			h |= (binary.LittleEndian.Uint32(w[4*t:]) >> 2 & 0x01010101) << t
		}
		binary.LittleEndian.PutUint32(y[56+16*ib+4*k:], h)
	}
	putQuads2(y[184:], k, &b.q, 3)
}

func q3KR4Get(y []byte, k int, b *kBlock) {
	copy(b.d[:], y[2*k:])
	for s := range 16 {
		is := 8*(s/2) + k + 4*(s%2)
		b.sc[s] = y[24+is%32]>>(4*(is/32))&0xf | (y[8+is%16]>>(2*(is/16))&3)<<4
	}
	getQuads2(y[184:], k, &b.q)
	for ib := range 8 {
		w := b.q[32*ib:]
		for i := range 4 {
			h := y[56+16*ib+4*k+i]
			for t := range 8 {
				w[i+4*t] |= (h >> t & 1) << 2
			}
		}
	}
}

// --- q4_K and q5_K ---

func kUnpackScaleMin(x []byte, b *kBlock) {
	for j := range 8 {
		b.sc[j], b.m[j] = kScaleMin(j, x)
	}
}

func kPackScaleMinFrom(x []byte, b *kBlock) {
	var sc, m [8]uint8
	copy(sc[:], b.sc[:8])
	copy(m[:], b.m[:8])
	kPackScaleMin(x, &sc, &m)
}

func q4KUnpack(x []byte, b *kBlock) {
	copy(b.d[:], x[q4KD:])
	copy(b.dmin[:], x[q4KDmin:])
	kUnpackScaleMin(x[q4KScales:], b)
	for c := range 4 {
		for l := range 32 {
			v := x[q4KQs+32*c+l]
			b.q[64*c+l] = v & 0xf
			b.q[64*c+32+l] = v >> 4
		}
	}
}

func q4KPack(x []byte, b *kBlock) {
	copy(x[q4KD:q4KD+2], b.d[:])
	copy(x[q4KDmin:q4KDmin+2], b.dmin[:])
	kPackScaleMinFrom(x[q4KScales:], b)
	for c := range 4 {
		for l := range 32 {
			x[q4KQs+32*c+l] = b.q[64*c+l]&0xf | b.q[64*c+32+l]<<4
		}
	}
}

// putScaleMinR4 stores the 6-bit scale and min of sub-block ib of row k at
// is = 4*ib+k: low nibbles in scales_l[is], top bits (scale's at bits 0-1,
// min's at 2-3) in scales_h[is%16] at 4*(is/16).
func putScaleMinR4(sh, sl []byte, k int, b *kBlock) {
	for ib := range 8 {
		is := 4*ib + k
		sl[is] = b.sc[ib]&0xf | (b.m[ib]&0xf)<<4
		h := b.sc[ib]>>4 | (b.m[ib]>>4)<<2
		sh[is%16] |= h << (4 * (is / 16))
	}
}

func getScaleMinR4(sh, sl []byte, k int, b *kBlock) {
	for ib := range 8 {
		is := 4*ib + k
		h := sh[is%16] >> (4 * (is / 16))
		b.sc[ib] = sl[is]&0xf | (h&3)<<4
		b.m[ib] = sl[is]>>4 | (h>>2&3)<<4
	}
}

// q4_k_r4 block: fp16 d[4], dmin[4], scales_h[16], scales_l[32], qs[512].
func q4KR4Put(y []byte, k int, b *kBlock) {
	copy(y[2*k:], b.d[:])
	copy(y[2*(k+4):], b.dmin[:])
	putScaleMinR4(y[16:32], y[32:64], k, b)
	putNibbles(y[64:], k, &b.q)
}

func q4KR4Get(y []byte, k int, b *kBlock) {
	copy(b.d[:], y[2*k:])
	copy(b.dmin[:], y[2*(k+4):])
	getScaleMinR4(y[16:32], y[32:64], k, b)
	getNibbles(y[64:], k, &b.q)
}

func q5KUnpack(x []byte, b *kBlock) {
	copy(b.d[:], x[q5KD:])
	copy(b.dmin[:], x[q5KDmin:])
	kUnpackScaleMin(x[q5KScales:], b)
	qh := x[q5KQh:]
	for c := range 4 {
		for l := range 32 {
			v := x[q5KQs+32*c+l]
			b.q[64*c+l] = v&0xf | (qh[l]>>(2*c)&1)<<4
			b.q[64*c+32+l] = v>>4 | (qh[l]>>(2*c+1)&1)<<4
		}
	}
}

func q5KPack(x []byte, b *kBlock) {
	copy(x[q5KD:q5KD+2], b.d[:])
	copy(x[q5KDmin:q5KDmin+2], b.dmin[:])
	kPackScaleMinFrom(x[q5KScales:], b)
	qh := x[q5KQh : q5KQh+32]
	clear(qh)
	for c := range 4 {
		for l := range 32 {
			lo, hi := b.q[64*c+l], b.q[64*c+32+l]
			x[q5KQs+32*c+l] = lo&0xf | hi<<4
			qh[l] |= (lo>>4)<<(2*c) | (hi>>4)<<(2*c+1)
		}
	}
}

// fifthBitOrder lists the weight offsets (within a quad's 32-weight
// sub-block) of bits 0..7 of a q5_k_r4 qh byte.
var fifthBitOrder = [8]int{0, 8, 4, 12, 16, 24, 20, 28}

// q5_k_r4 block: as q4_k_r4, with qh[128] before the nibbles:
// qh[16*ib+4k+i] bit t is the fifth bit of weight 32*ib+i+fifthBitOrder[t].
func q5KR4Put(y []byte, k int, b *kBlock) {
	copy(y[2*k:], b.d[:])
	copy(y[2*(k+4):], b.dmin[:])
	putScaleMinR4(y[16:32], y[32:64], k, b)
	for ib := range 8 {
		w := b.q[32*ib:]
		for i := range 4 {
			var h uint8
			for t, off := range fifthBitOrder {
				h |= (w[i+off] >> 4) << t
			}
			y[64+16*ib+4*k+i] = h
		}
	}
	putNibbles(y[192:], k, &b.q)
}

func q5KR4Get(y []byte, k int, b *kBlock) {
	copy(b.d[:], y[2*k:])
	copy(b.dmin[:], y[2*(k+4):])
	getScaleMinR4(y[16:32], y[32:64], k, b)
	getNibbles(y[192:], k, &b.q)
	for ib := range 8 {
		w := b.q[32*ib:]
		for i := range 4 {
			h := y[64+16*ib+4*k+i]
			for t, off := range fifthBitOrder {
				w[i+off] |= (h >> t & 1) << 4
			}
		}
	}
}

// --- q6_K ---

func q6KUnpack(x []byte, b *kBlock) {
	copy(b.d[:], x[q6KD:])
	for s := range 16 {
		b.isc[s] = int8(x[q6KScales+s])
	}
	for half := range 2 {
		ql := x[q6KQl+64*half:]
		qh := x[q6KQh+32*half:]
		w := b.q[128*half:]
		for l := range 32 {
			w[l] = ql[l]&0xf | (qh[l]&3)<<4
			w[l+32] = ql[l+32]&0xf | (qh[l]>>2&3)<<4
			w[l+64] = ql[l]>>4 | (qh[l]>>4&3)<<4
			w[l+96] = ql[l+32]>>4 | (qh[l]>>6&3)<<4
		}
	}
}

func q6KPack(x []byte, b *kBlock) {
	copy(x[q6KD:q6KD+2], b.d[:])
	for s := range 16 {
		x[q6KScales+s] = uint8(b.isc[s])
	}
	for half := range 2 {
		ql := x[q6KQl+64*half:]
		qh := x[q6KQh+32*half:]
		w := b.q[128*half:]
		for l := range 32 {
			ql[l] = w[l]&0xf | w[l+64]<<4
			ql[l+32] = w[l+32]&0xf | w[l+96]<<4
			qh[l] = w[l]>>4 | (w[l+32]>>4)<<2 | (w[l+64]>>4)<<4 | (w[l+96]>>4)<<6
		}
	}
}

// q6_k_r4 block: fp16 d[4], int8 scales[64] (scale 2*ib+h of row k at
// 8*ib+k+4*h), qh[256], ql[512] (nibbles as q4_k_r4). qh[32*ib+4k+i] holds
// the top bit pairs of weights i, i+8, i+4, i+12; qh[32*ib+4k+i+16] those of
// i+16, i+24, i+20, i+28.
func q6KR4Put(y []byte, k int, b *kBlock) {
	copy(y[2*k:], b.d[:])
	for ib := range 8 {
		y[8+8*ib+k] = uint8(b.isc[2*ib])
		y[8+8*ib+k+4] = uint8(b.isc[2*ib+1])
		w := b.q[32*ib:]
		for i := range 4 {
			y[72+32*ib+4*k+i] = w[i]>>4 | (w[i+8]>>4)<<2 | (w[i+4]>>4)<<4 | (w[i+12]>>4)<<6
			y[72+32*ib+4*k+i+16] = w[i+16]>>4 | (w[i+24]>>4)<<2 | (w[i+20]>>4)<<4 | (w[i+28]>>4)<<6
		}
	}
	putNibbles(y[328:], k, &b.q)
}

func q6KR4Get(y []byte, k int, b *kBlock) {
	copy(b.d[:], y[2*k:])
	getNibbles(y[328:], k, &b.q)
	for ib := range 8 {
		b.isc[2*ib] = int8(y[8+8*ib+k])
		b.isc[2*ib+1] = int8(y[8+8*ib+k+4])
		w := b.q[32*ib:]
		for i := range 4 {
			h0, h1 := y[72+32*ib+4*k+i], y[72+32*ib+4*k+i+16]
			for t, off := range [4]int{0, 8, 4, 12} {
				w[i+off] |= (h0 >> (2 * t) & 3) << 4
				w[i+16+off] |= (h1 >> (2 * t) & 3) << 4
			}
		}
	}
}
