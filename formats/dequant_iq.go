package formats

import (
	"encoding/binary"

	"github.com/gquant/gquant/internal/tables"
)

// Dequantizers of the IQ grid types, in the reference's arithmetic order
// (dequantize_row_iq* in ggml-quants.c and iqk_quantize.cpp). Every product is
// a separate float32 rounding, as in the reference: nothing here is followed
// by an addition that a compiler could fuse.

func init() {
	registerDequantizer(IQ2_XXS, dequantIQ2XXS)
	registerDequantizer(IQ2_XS, dequantIQ2XS)
	registerDequantizer(IQ2_S, dequantIQ2S)
	registerDequantizer(IQ3_XXS, dequantIQ3XXS)
	registerDequantizer(IQ3_S, dequantIQ3S)
	registerDequantizer(IQ1_S, dequantIQ1S)
	registerDequantizer(IQ1_M, dequantIQ1M)
	registerDequantizer(IQ4_NL, dequantIQ4NL)
	registerDequantizer(IQ4_XS, dequantIQ4XS)
	registerDequantizer(IQ1_S_R4, dequantIQ1SR4)
	registerDequantizer(IQ1_M_R4, dequantIQ1MR4)
}

const iqSuper = 256

// IQ1SDelta is the shift iq1_s and iq1_m add to (or subtract from) every grid value.
const IQ1SDelta = float32(0.125)

func f16(b []byte) float32 { return FP16ToFP32(binary.LittleEndian.Uint16(b)) }

// signed returns v, negated when bit j of signs is set.
func signed(v float32, signs uint8, j int) float32 {
	if signs&(1<<j) != 0 {
		return -v
	}
	return v
}

func dequantIQ2XXS(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/iqSuper; i++ {
		blk := src[i*66:]
		d := f16(blk)
		y := dst[i*iqSuper:]
		for ib := 0; ib < 8; ib++ {
			grids := blk[2+8*ib:]
			aux1 := binary.LittleEndian.Uint32(blk[2+8*ib+4:])
			db := d * (0.5 + float32(aux1>>28)) * 0.25
			for l := 0; l < 4; l++ {
				g := tables.IQ2XXSGrid[grids[l]]
				signs := tables.KSignsIQ2XS[(aux1>>(7*l))&127]
				for j := 0; j < 8; j++ {
					y[32*ib+8*l+j] = signed(db*float32(uint8(g>>(8*j))), signs, j)
				}
			}
		}
	}
}

func dequantIQ2XS(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/iqSuper; i++ {
		blk := src[i*74:]
		d := f16(blk)
		scales := blk[66:74]
		y := dst[i*iqSuper:]
		for ib := 0; ib < 8; ib++ {
			db := [2]float32{d * (0.5 + float32(scales[ib]&0xf)) * 0.25, d * (0.5 + float32(scales[ib]>>4)) * 0.25}
			for l := 0; l < 4; l++ {
				q := binary.LittleEndian.Uint16(blk[2+2*(4*ib+l):])
				g := tables.IQ2XSGrid[q&511]
				signs := tables.KSignsIQ2XS[q>>9]
				for j := 0; j < 8; j++ {
					y[32*ib+8*l+j] = signed(db[l/2]*float32(uint8(g>>(8*j))), signs, j)
				}
			}
		}
	}
}

func dequantIQ2S(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/iqSuper; i++ {
		blk := src[i*82:]
		d := f16(blk)
		qs, signs, qh, scales := blk[2:34], blk[34:66], blk[66:74], blk[74:82]
		y := dst[i*iqSuper:]
		for ib := 0; ib < 8; ib++ {
			db := [2]float32{d * (0.5 + float32(scales[ib]&0xf)) * 0.25, d * (0.5 + float32(scales[ib]>>4)) * 0.25}
			for l := 0; l < 4; l++ {
				idx := int(qs[4*ib+l]) | (int(qh[ib])<<(8-2*l))&0x300
				g := tables.IQ2SGrid[idx]
				for j := 0; j < 8; j++ {
					y[32*ib+8*l+j] = signed(db[l/2]*float32(uint8(g>>(8*j))), signs[4*ib+l], j)
				}
			}
		}
	}
}

func dequantIQ3XXS(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/iqSuper; i++ {
		blk := src[i*98:]
		d := f16(blk)
		qs, sas := blk[2:66], blk[66:98]
		y := dst[i*iqSuper:]
		for ib := 0; ib < 8; ib++ {
			aux := binary.LittleEndian.Uint32(sas[4*ib:])
			db := d * (0.5 + float32(aux>>28)) * 0.5
			for l := 0; l < 4; l++ {
				signs := tables.KSignsIQ2XS[(aux>>(7*l))&127]
				g1, g2 := tables.IQ3XXSGrid[qs[8*ib+2*l]], tables.IQ3XXSGrid[qs[8*ib+2*l+1]]
				for j := 0; j < 4; j++ {
					y[32*ib+8*l+j] = signed(db*float32(uint8(g1>>(8*j))), signs, j)
					y[32*ib+8*l+j+4] = signed(db*float32(uint8(g2>>(8*j))), signs, j+4)
				}
			}
		}
	}
}

func dequantIQ3S(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/iqSuper; i++ {
		blk := src[i*110:]
		d := f16(blk)
		qs, qh, signs, scales := blk[2:66], blk[66:74], blk[74:106], blk[106:110]
		y := dst[i*iqSuper:]
		for ib := 0; ib < 8; ib++ {
			sc := scales[ib/2] >> (4 * (ib % 2)) & 0xf
			db := d * float32(1+2*int(sc))
			h := int(qh[ib])
			for l := 0; l < 4; l++ {
				g1 := tables.IQ3SGrid[int(qs[8*ib+2*l])|(h<<(8-2*l))&256]
				g2 := tables.IQ3SGrid[int(qs[8*ib+2*l+1])|(h<<(7-2*l))&256]
				s := signs[4*ib+l]
				for j := 0; j < 4; j++ {
					y[32*ib+8*l+j] = signed(db*float32(uint8(g1>>(8*j))), s, j)
					y[32*ib+8*l+j+4] = signed(db*float32(uint8(g2>>(8*j))), s, j+4)
				}
			}
		}
	}
}

// iq1Value is grid value j of iq1_s code idx (one of -1, 0, 1).
func iq1Value(idx int, j int) float32 { return float32(int8(tables.IQ1SGrid[idx] >> (8 * j))) }

func dequantIQ1S(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/iqSuper; i++ {
		blk := src[i*50:]
		d := f16(blk)
		qs := blk[2:34]
		y := dst[i*iqSuper:]
		for ib := 0; ib < 8; ib++ {
			qh := int(binary.LittleEndian.Uint16(blk[34+2*ib:]))
			dl := d * float32(2*((qh>>12)&7)+1)
			delta := IQ1SDelta
			if qh&0x8000 != 0 {
				delta = -IQ1SDelta
			}
			for l := 0; l < 4; l++ {
				idx := int(qs[4*ib+l]) | ((qh>>(3*l))&7)<<8
				for j := 0; j < 8; j++ {
					y[32*ib+8*l+j] = dl * (iq1Value(idx, j) + delta)
				}
			}
		}
	}
}

func dequantIQ1M(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/iqSuper; i++ {
		blk := src[i*56:]
		qs, qh := blk[0:32], blk[32:48]
		var sc [4]uint16
		for k := range sc {
			sc[k] = binary.LittleEndian.Uint16(blk[48+2*k:])
		}
		d := FP16ToFP32(sc[0]>>12 | (sc[1]>>8)&0x00f0 | (sc[2]>>4)&0x0f00 | sc[3]&0xf000)
		y := dst[i*iqSuper:]
		for ib := 0; ib < 8; ib++ {
			s := int(sc[ib/2])
			dl1 := d * float32(2*((s>>(6*(ib%2)))&7)+1)
			dl2 := d * float32(2*((s>>(6*(ib%2)+3))&7)+1)
			h0, h1 := int(qh[2*ib]), int(qh[2*ib+1])
			idx := [4]int{int(qs[4*ib]) | (h0<<8)&0x700, int(qs[4*ib+1]) | (h0<<4)&0x700,
				int(qs[4*ib+2]) | (h1<<8)&0x700, int(qs[4*ib+3]) | (h1<<4)&0x700}
			hs := [4]int{h0 & 0x08, h0 & 0x80, h1 & 0x08, h1 & 0x80}
			for l := 0; l < 4; l++ {
				delta := IQ1SDelta
				if hs[l] != 0 {
					delta = -IQ1SDelta
				}
				dl := dl1
				if l >= 2 {
					dl = dl2
				}
				for j := 0; j < 8; j++ {
					y[32*ib+8*l+j] = dl * (iq1Value(idx[l], j) + delta)
				}
			}
		}
	}
}

func dequantIQ4NL(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/32; i++ {
		blk := src[i*18:]
		d := f16(blk)
		y := dst[i*32:]
		for j := 0; j < 16; j++ {
			q := blk[2+j]
			y[j] = d * float32(tables.KValuesIQ4NL[q&0xf])
			y[j+16] = d * float32(tables.KValuesIQ4NL[q>>4])
		}
	}
}

func dequantIQ4XS(dst []float32, src []byte, ne0 int) {
	for i := 0; i < ne0/iqSuper; i++ {
		blk := src[i*136:]
		d := f16(blk)
		sh := int(binary.LittleEndian.Uint16(blk[2:]))
		sl, qs := blk[4:8], blk[8:136]
		y := dst[i*iqSuper:]
		for ib := 0; ib < 8; ib++ {
			ls := int(sl[ib/2]>>(4*(ib%2)))&0xf | ((sh>>(2*ib))&3)<<4
			dl := d * float32(ls-32)
			for j := 0; j < 16; j++ {
				q := qs[16*ib+j]
				y[32*ib+j] = dl * float32(tables.KValuesIQ4NL[q&0xf])
				y[32*ib+j+16] = dl * float32(tables.KValuesIQ4NL[q>>4])
			}
		}
	}
}

// dequantIQ1SR4 turns one group of 4 iq1_s_r4 rows (4 fp16 row scales, then
// blocks of 32 weights for the 4 rows) into float32.
func dequantIQ1SR4(dst []float32, src []byte, ne0 int) {
	var d [4]float32
	for k := range d {
		d[k] = f16(src[2*k:])
	}
	blocks := src[8:]
	for ib := 0; ib < ne0/32; ib++ {
		blk := blocks[ib*24:]
		for k := 0; k < 4; k++ {
			qh := int(binary.LittleEndian.Uint16(blk[16+2*k:]))
			delta := IQ1SDelta
			if qh&0x8000 != 0 {
				delta = -IQ1SDelta
			}
			dl := d[k] * float32(2*((qh>>12)&7)+1)
			for i := 0; i < 4; i++ {
				idx := int(blk[4*i+k]) | ((qh>>(3*i))&7)<<8
				for j := 0; j < 8; j++ {
					dst[k*ne0+32*ib+8*i+j] = dl * (iq1Value(idx, j) + delta)
				}
			}
		}
	}
}

// dequantIQ1MR4 is dequantIQ1SR4 for iq1_m_r4 (blocks of 28 bytes: qs[16],
// qh[8], scales[4]).
func dequantIQ1MR4(dst []float32, src []byte, ne0 int) {
	var d [4]float32
	for k := range d {
		d[k] = f16(src[2*k:])
	}
	blocks := src[8:]
	for ib := 0; ib < ne0/32; ib++ {
		blk := blocks[ib*28:]
		qs, qh, scales := blk[0:16], blk[16:24], blk[24:28]
		for k := 0; k < 4; k++ {
			dl := [2]float32{d[k] * float32(scales[k]&0xf), d[k] * float32(scales[k]>>4)}
			for i := 0; i < 2; i++ {
				h := int(qh[4*i+k])
				idx1 := int(qs[8*i+k]) | (h&0x07)<<8
				idx2 := int(qs[8*i+k+4]) | (h&0x70)<<4
				delta1, delta2 := IQ1SDelta, IQ1SDelta
				if h&0x08 != 0 {
					delta1 = -IQ1SDelta
				}
				if h&0x80 != 0 {
					delta2 = -IQ1SDelta
				}
				for j := 0; j < 8; j++ {
					dst[k*ne0+32*ib+16*i+j] = dl[i] * (iq1Value(idx1, j) + delta1)
					dst[k*ne0+32*ib+16*i+j+8] = dl[i] * (iq1Value(idx2, j) + delta2)
				}
			}
		}
	}
}
