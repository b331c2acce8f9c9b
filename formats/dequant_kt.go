package formats

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/internal/tables"
)

// Dequantizers of the trellis types. Every row starts with a float32 scale;
// each super-block of 256 weights then holds 4-bit (or, for iq4_kt, 7-bit)
// block scales and one codebook index per group of 8 (iq4_kt: 4) weights.

func init() {
	registerDequantizer(IQ1_KT, ktPerRow(IQ1_KT, dequantRowIQ1KT))
	registerDequantizer(IQ2_KT, ktPerRow(IQ2_KT, dequantRowIQ2KT))
	registerDequantizer(IQ3_KT, ktPerRow(IQ3_KT, dequantRowIQ3KT))
	registerDequantizer(IQ4_KT, ktPerRow(IQ4_KT, dequantRowIQ4KT))
}

const ktSuperBlock = 256

func ktPerRow(t Type, row func(y []float32, d float32, blocks []byte)) rowGroupDequantizer {
	return func(dst []float32, src []byte, ne0 int) {
		d := math.Float32frombits(binary.LittleEndian.Uint32(src))
		row(dst[:ne0], d, src[4:])
	}
}

// ktGroup writes scale times the codeword of seed into y.
func ktGroup(y []float32, seed uint32, scale float32, abs bool) {
	KTCodeword(y, seed, abs)
	for k := range y {
		y[k] = scale * y[k]
	}
}

// dequantRowIQ1KT: per 56-byte super-block sh[8] (low nibble: scale index;
// bits 4..7: 13th index bit of the block's four groups), ql[32] (low 8 index
// bits), qh[16] (index bits 8..11, blocks 0-3 in low nibbles, 4-7 in high).
func dequantRowIQ1KT(y []float32, d float32, x []byte) {
	for ibl := 0; ibl < len(y)/ktSuperBlock; ibl++ {
		b := x[56*ibl : 56*ibl+56]
		sh, ql, qh := b[:8], b[8:40], b[40:56]
		for ib := 0; ib < 8; ib++ {
			sl := d * float32(tables.KTScaleValues[sh[ib]&0xf])
			for ig := 0; ig < 4; ig++ {
				idx := uint32(ql[ib*4+ig]) | uint32(qh[(ib%4)*4+ig])<<(8-4*(ib/4))&0xf00
				idx |= uint32(sh[ib]) << (8 - ig) & 0x1000
				o := ktSuperBlock*ibl + 32*ib + 8*ig
				ktGroup(y[o:o+8], idx+KTOffset, sl, false)
			}
		}
	}
}

// dequantRowIQ2KT: per 68-byte super-block scales[4] (block ib in the low
// nibble of byte ib, block ib+4 in the high nibble) and 32 little-endian
// 16-bit indices.
func dequantRowIQ2KT(y []float32, d float32, x []byte) {
	for ibl := 0; ibl < len(y)/ktSuperBlock; ibl++ {
		b := x[68*ibl : 68*ibl+68]
		scales, ql := b[:4], b[4:]
		for ib := 0; ib < 8; ib++ {
			sl := d * float32(tables.KTScaleValues[scales[ib%4]>>(4*(ib/4))&0xf])
			for ig := 0; ig < 4; ig++ {
				idx := uint32(binary.LittleEndian.Uint16(ql[2*(4*ib+ig):]))
				o := ktSuperBlock*ibl + 32*ib + 8*ig
				ktGroup(y[o:o+8], idx+KTOffset, sl, false)
			}
		}
	}
}

// dequantRowIQ3KT: per 100-byte super-block scales[4] (linear 4-bit, same
// nibble layout as iq2_kt), 32 16-bit indices into the magnitude codebook,
// and qh[32]: bit ib of byte j is the sign of weight j of block ib.
func dequantRowIQ3KT(y []float32, d float32, x []byte) {
	for ibl := 0; ibl < len(y)/ktSuperBlock; ibl++ {
		b := x[100*ibl : 100*ibl+100]
		scales, ql, qh := b[:4], b[4:68], b[68:100]
		for ib := 0; ib < 8; ib++ {
			sl := d * float32(scales[ib%4]>>(4*(ib/4))&0xf)
			for ig := 0; ig < 4; ig++ {
				idx := uint32(binary.LittleEndian.Uint16(ql[2*(4*ib+ig):]))
				o := ktSuperBlock*ibl + 32*ib + 8*ig
				g := y[o : o+8]
				ktGroup(g, idx+KTOffset, sl, true)
				for j := range g {
					if qh[8*ig+j]>>ib&1 != 0 {
						g[j] = -g[j]
					}
				}
			}
		}
	}
}

// dequantRowIQ4KT: per 128-byte super-block eight 32-bit words (one per
// block: bit 0 selects the second codebook, bits 1..7 the scale + 64, bits
// 8.. three high index bits per group of 4), ql[64] (low 8 index bits) and
// qh[32] (bits 8..11, groups 0-31 in low nibbles, 32-63 in high).
func dequantRowIQ4KT(y []float32, d float32, x []byte) {
	for ibl := 0; ibl < len(y)/ktSuperBlock; ibl++ {
		b := x[128*ibl : 128*ibl+128]
		ql, qh := b[32:96], b[96:128]
		for ib := 0; ib < 8; ib++ {
			shb := binary.LittleEndian.Uint32(b[4*ib:])
			offset := uint32(KTOffset)
			if shb&1 != 0 {
				offset = KTOffsetIQ4Alt
			}
			sl := d * float32(int(shb&0xff>>1)-64)
			for ig := 0; ig < 8; ig++ {
				jj := ib*8 + ig
				idx := uint32(ql[jj]) | uint32(qh[jj%32])<<(8-4*(jj/32))&0xf00 | (shb>>(8+3*ig)&7)<<12
				o := ktSuperBlock*ibl + 32*ib + 4*ig
				ktGroup(y[o:o+4], idx+offset, sl, false)
			}
		}
	}
}
