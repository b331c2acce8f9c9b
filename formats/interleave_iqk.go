package formats

import "sync"

// Row interleaving of the IQK _r4 types (ik_llama.cpp repack_iq*_k*): four
// rows of the base type are merged block by block so the matrix kernels can
// load four rows' quants at once. Every repack moves bits without changing
// them, so the inverse is derived once from the forward repack (see
// bitPermutation) instead of being written out by hand.

func init() {
	for _, r := range []struct {
		t       Type
		forward func(group, base []byte, ne0 int)
	}{
		{IQ2_K_R4, repackIQ2K},
		{IQ3_K_R4, repackIQ3K},
		{IQ4_K_R4, repackIQ4K},
		{IQ5_K_R4, repackIQ5K},
		{IQ4_KS_R4, repackIQ4KS},
		{IQ5_KS_R4, repackIQ5KS},
	} {
		perm := &bitPermutation{t: r.t, forward: r.forward}
		registerInterleaver(r.t, interleaver{interleave: r.forward, deinterleave: perm.invert})
	}
}

// iqkQuarterBits returns the 2-bit indices of a 256-weight block stored the
// iq2_k/iq3_k way: 32-byte groups, 4 shifts per byte.
func iqkLowBits2(qs []byte, L *[256]uint8) {
	for ib32 := 0; ib32 < 8; ib32++ {
		shift := uint(2 * (ib32 % 4))
		q := qs[32*(ib32/4):]
		for j := 0; j < 32; j++ {
			L[32*ib32+j] = (q[j] >> shift) & 3
		}
	}
}

// repackCommonK handles what iq2_k .. iq5_k share: fp16 scales, the extra
// bits and the 4-bit low scale nibbles (sl[ib] for ib32 = 0..7, both halves).
func repackHeaderK(dst, src []byte, k int, scalesL []byte, dstScalesL []byte) {
	dst[2*k], dst[2*k+1] = src[0], src[1]
	extra := uint16(src[2]) | uint16(src[3])<<8
	ex := dst[8:16]
	for ib := 0; ib < 8; ib++ {
		if extra&1 != 0 {
			ex[k] |= 1 << ib
		}
		if extra&2 != 0 {
			ex[k+4] |= 1 << ib
		}
		extra >>= 2
		sl1, sl2 := scalesL[ib]&0xf, scalesL[ib]>>4
		i := 8*ib + k
		dstScalesL[i%32] |= sl1 << (4 * (i / 32))
		i += 4
		dstScalesL[i%32] |= sl2 << (4 * (i / 32))
	}
}

func repackIQ2K(group, base []byte, ne0 int) {
	const bs, rbs = 76, 304
	nblock := ne0 / 256
	var L [256]uint8
	for ibl := 0; ibl < nblock; ibl++ {
		y := group[ibl*rbs : (ibl+1)*rbs]
		clear(y)
		for k := 0; k < 4; k++ {
			x := base[(k*nblock+ibl)*bs:]
			repackHeaderK(y, x, k, x[4:12], y[16:48])
			iqkLowBits2(x[12:76], &L)
			qs := y[48:]
			for ib := 0; ib < 8; ib++ {
				l := L[32*ib:]
				for i := 0; i < 4; i++ {
					qs[32*ib+4*k+i] = l[i] | l[i+4]<<2 | l[i+8]<<4 | l[i+12]<<6
					qs[32*ib+4*k+i+16] = l[i+16] | l[i+20]<<2 | l[i+24]<<4 | l[i+28]<<6
				}
			}
		}
	}
}

func repackIQ3K(group, base []byte, ne0 int) {
	const bs, rbs = 110, 440
	nblock := ne0 / 256
	var L [256]uint8
	for ibl := 0; ibl < nblock; ibl++ {
		y := group[ibl*rbs : (ibl+1)*rbs]
		clear(y)
		for k := 0; k < 4; k++ {
			x := base[(k*nblock+ibl)*bs:]
			repackHeaderK(y, x, k, x[6:14], y[24:56])
			sh := uint16(x[4]) | uint16(x[5])<<8
			scalesH := y[16:24]
			for ib := 0; ib < 8; ib++ {
				i := 8*ib + k
				scalesH[i%8] |= byte(sh&1) << (i / 8)
				i += 4
				scalesH[i%8] |= byte((sh>>1)&1) << (i / 8)
				sh >>= 2
			}
			iqkLowBits2(x[14:78], &L)
			qh := x[78:110]
			for ib32 := 0; ib32 < 8; ib32++ {
				for j := 0; j < 32; j++ {
					L[32*ib32+j] |= ((qh[j] >> ib32) & 1) << 2
				}
			}
			qs, yqh := y[56:312], y[312:440]
			for ib := 0; ib < 8; ib++ {
				l := L[32*ib:]
				for i := 0; i < 4; i++ {
					qs[32*ib+4*k+i] = l[i]&3 | (l[i+4]&3)<<2 | (l[i+8]&3)<<4 | (l[i+12]&3)<<6
					qs[32*ib+4*k+i+16] = l[i+16]&3 | (l[i+20]&3)<<2 | (l[i+24]&3)<<4 | (l[i+28]&3)<<6
					yqh[16*ib+4*k+i] = l[i]>>2 | (l[i+4]>>2)<<1 | (l[i+8]>>2)<<2 | (l[i+12]>>2)<<3 |
						(l[i+16]>>2)<<4 | (l[i+20]>>2)<<5 | (l[i+24]>>2)<<6 | (l[i+28]>>2)<<7
				}
			}
		}
	}
}

// repackScalesH6 moves the 2-bit high parts of the 6-bit iq4_k/iq5_k scales.
func repackScalesH6(dst, scalesH []byte, k int) {
	for ib := 0; ib < 8; ib++ {
		sh := scalesH[ib/2] >> (4 * (ib % 2))
		i := 8*ib + k
		dst[i%16] |= (sh & 3) << (2 * (i / 16))
		i += 4
		dst[i%16] |= ((sh >> 2) & 3) << (2 * (i / 16))
	}
}

// interleaveNibbles4 writes the 4-bit indices L (32 per sub-block) of row k
// into the r4 qs layout shared by iq4_k_r4 .. iq5_ks_r4.
func interleaveNibbles4(qs []byte, L *[256]uint8, k int) {
	for ib := 0; ib < 8; ib++ {
		l := L[32*ib:]
		for i := 0; i < 4; i++ {
			qs[64*ib+4*k+i] = l[i]&0xf | (l[i+8]&0xf)<<4
			qs[64*ib+4*k+i+16] = l[i+16]&0xf | (l[i+24]&0xf)<<4
			qs[64*ib+4*k+i+32] = l[i+4]&0xf | (l[i+12]&0xf)<<4
			qs[64*ib+4*k+i+48] = l[i+20]&0xf | (l[i+28]&0xf)<<4
		}
	}
}

// interleaveHigh5 writes the fifth index bits of row k (iq5_k_r4, iq5_ks_r4).
func interleaveHigh5(qh []byte, L *[256]uint8, k int) {
	for ib := 0; ib < 8; ib++ {
		l := L[32*ib:]
		for i := 0; i < 4; i++ {
			qh[16*ib+4*k+i] = l[i]>>4 | (l[i+8]>>4)<<1 | (l[i+16]>>4)<<2 | (l[i+24]>>4)<<3 |
				(l[i+4]>>4)<<4 | (l[i+12]>>4)<<5 | (l[i+20]>>4)<<6 | (l[i+28]>>4)<<7
		}
	}
}

// nibbles4 unpacks the iq4_k / iq4_ks layout (16 bytes per 32 weights, low
// nibbles first) into L.
func nibbles4(qs []byte, L *[256]uint8) {
	for ib := 0; ib < 8; ib++ {
		for j := 0; j < 16; j++ {
			L[32*ib+j] = qs[16*ib+j] & 0xf
			L[32*ib+j+16] = qs[16*ib+j] >> 4
		}
	}
}

// nibbles5 unpacks the iq5_k / iq5_ks layout (qs of 32 bytes per 64
// weights, qh bits 2 per 64 weights) into L.
func nibbles5(qs, qh []byte, L *[256]uint8) {
	shift := uint(0)
	for ib64 := 0; ib64 < 4; ib64++ {
		q, l := qs[32*ib64:], L[64*ib64:]
		for j := 0; j < 16; j++ {
			l[j] = q[j]&0xf | ((qh[j]>>shift)&1)<<4
			l[j+16] = q[j+16]&0xf | ((qh[j+16]>>shift)&1)<<4
			l[j+32] = q[j]>>4 | ((qh[j]>>shift)&2)<<3
			l[j+48] = q[j+16]>>4 | ((qh[j+16]>>shift)&2)<<3
		}
		shift += 2
	}
}

func repackIQ4K(group, base []byte, ne0 int) {
	const bs, rbs = 144, 576
	nblock := ne0 / 256
	var L [256]uint8
	for ibl := 0; ibl < nblock; ibl++ {
		y := group[ibl*rbs : (ibl+1)*rbs]
		clear(y)
		for k := 0; k < 4; k++ {
			x := base[(k*nblock+ibl)*bs:]
			repackHeaderK(y, x, k, x[8:16], y[32:64])
			repackScalesH6(y[16:32], x[4:8], k)
			nibbles4(x[16:144], &L)
			interleaveNibbles4(y[64:576], &L, k)
		}
	}
}

func repackIQ5K(group, base []byte, ne0 int) {
	const bs, rbs = 176, 704
	nblock := ne0 / 256
	var L [256]uint8
	for ibl := 0; ibl < nblock; ibl++ {
		y := group[ibl*rbs : (ibl+1)*rbs]
		clear(y)
		for k := 0; k < 4; k++ {
			x := base[(k*nblock+ibl)*bs:]
			repackHeaderK(y, x, k, x[8:16], y[32:64])
			repackScalesH6(y[16:32], x[4:8], k)
			nibbles5(x[16:144], x[144:176], &L)
			interleaveNibbles4(y[64:576], &L, k)
			interleaveHigh5(y[576:704], &L, k)
		}
	}
}

func repackIQ4KS(group, base []byte, ne0 int) {
	const bs, rbs = 136, 544
	nblock := ne0 / 256
	rowBytes := 4 + bs*nblock
	var L [256]uint8
	for k := 0; k < 4; k++ {
		copy(group[4*k:4*k+4], base[k*rowBytes:])
	}
	for ibl := 0; ibl < nblock; ibl++ {
		y := group[16+ibl*rbs : 16+(ibl+1)*rbs]
		clear(y)
		for k := 0; k < 4; k++ {
			x := base[k*rowBytes+4+ibl*bs:]
			for ib := 0; ib < 8; ib++ {
				y[4*ib+k] = x[ib]
			}
			nibbles4(x[8:136], &L)
			interleaveNibbles4(y[32:544], &L, k)
		}
	}
}

func repackIQ5KS(group, base []byte, ne0 int) {
	const bs, rbs = 168, 672
	nblock := ne0 / 256
	rowBytes := 4 + bs*nblock
	var L [256]uint8
	for k := 0; k < 4; k++ {
		copy(group[4*k:4*k+4], base[k*rowBytes:])
	}
	for ibl := 0; ibl < nblock; ibl++ {
		y := group[16+ibl*rbs : 16+(ibl+1)*rbs]
		clear(y)
		for k := 0; k < 4; k++ {
			x := base[k*rowBytes+4+ibl*bs:]
			for ib := 0; ib < 8; ib++ {
				y[4*ib+k] = x[ib]
			}
			nibbles5(x[8:136], x[136:168], &L)
			interleaveNibbles4(y[32:544], &L, k)
			interleaveHigh5(y[544:672], &L, k)
		}
	}
}

// bitPermutation inverts a repack that only moves bits. It probes the
// forward repack on a 256-weight row group one set bit at a time and records
// where each bit lands; larger rows repeat the same pattern per 256 weights
// after the per-row headers.
type bitPermutation struct {
	t       Type
	forward func(group, base []byte, ne0 int)
	once    sync.Once
	srcBit  []int32 // for each bit of a 256-weight group: its bit in the base rows, or -1
}

func (p *bitPermutation) build() {
	info := p.t.info()
	meta, bs := info.RowMeta, info.TypeSize
	n := 4 * (meta + bs)
	base, group := make([]byte, n), make([]byte, n)
	p.srcBit = make([]int32, 8*n)
	for i := range p.srcBit {
		p.srcBit[i] = -1
	}
	for bit := 0; bit < 8*n; bit++ {
		clear(base)
		base[bit/8] = 1 << (bit % 8)
		p.forward(group, base, 256)
		for i, b := range group {
			for b != 0 {
				j := 0
				for b&(1<<j) == 0 {
					j++
				}
				p.srcBit[8*i+j] = int32(bit)
				b &^= 1 << j
			}
		}
	}
}

// invert un-interleaves one row group.
func (p *bitPermutation) invert(base, group []byte, ne0 int) {
	p.once.Do(p.build)
	info := p.t.info()
	meta, bs := info.RowMeta, info.TypeSize
	nblock := ne0 / 256
	rowBytes := meta + bs*nblock
	clear(base)
	// Map a byte offset of the 256-weight probe layout to the real layout.
	groupOff := func(o, ibl int) int {
		if o < 4*meta {
			return o
		}
		return 4*meta + ibl*4*bs + (o - 4*meta)
	}
	baseOff := func(o, ibl int) int {
		k, r := o/(meta+bs), o%(meta+bs)
		if r < meta {
			return k*rowBytes + r
		}
		return k*rowBytes + meta + ibl*bs + (r - meta)
	}
	for ibl := 0; ibl < nblock; ibl++ {
		for gb, sb := range p.srcBit {
			if sb < 0 || (ibl > 0 && gb/8 < 4*meta) {
				continue
			}
			if group[groupOff(gb/8, ibl)]&(1<<(gb%8)) != 0 {
				base[baseOff(int(sb)/8, ibl)] |= 1 << (sb % 8)
			}
		}
	}
}
