package formats

import (
	"encoding/binary"
	"math"
)

// The reference's dequantizers for iq1_bn and iq2_bn (the type traits'
// to_float) do not know about the per-row scale: they decode the row's
// bytes from its very first byte as blocks, so the header is read as if it
// were trits, the last RowMeta bytes of the row are never read, and the
// output is in units of the row scale (-1, 0, +1 for well-formed blocks).
// These ports do exactly that, because DequantizeRows promises the
// reference's numbers; the real weight is the row scale (fp16 for iq1_bn,
// float32 for iq2_bn, in the header) times the trit of the block it belongs to.

func init() {
	registerDequantizer(IQ1_BN, bnPerRow(dequantRowIQ1BN))
	registerDequantizer(IQ2_BN, bnPerRow(dequantRowIQ2BN))
}

func bnPerRow(row func(dst []float32, src []byte)) rowGroupDequantizer {
	return func(dst []float32, src []byte, ne0 int) {
		row(dst[:ne0], src)
	}
}

func bnLEF32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// bnTritMul are the multipliers that bring trit j of a packed byte to the top.
var bnTritMul = [5]uint8{81, 27, 9, 3, 1}

func dequantRowIQ1BN(y []float32, x []byte) {
	trit := func(q uint8, j int) float32 {
		v := q * bnTritMul[j]
		return float32(int((int(v)+int(v>>1))>>7) - 1)
	}
	for ib := 0; ib < len(y)/bnBlockSize; ib++ {
		blk := x[13*ib : 13*ib+13]
		out := y[bnBlockSize*ib:]
		n := 0
		for i16 := 0; i16 < 4; i16++ {
			for k := 0; k < 3; k++ {
				for j := 0; j < 5; j++ {
					out[n] = trit(blk[3*i16+k], j)
					n++
				}
			}
			out[n] = trit(blk[12], i16)
			n++
		}
	}
}

func dequantRowIQ2BN(y []float32, x []byte) {
	for ib := 0; ib < len(y)/bnBlockSize; ib++ {
		qs := x[16*ib : 16*ib+16]
		out := y[bnBlockSize*ib:]
		for j, q := range qs {
			out[j] = float32(q&3) - 1
			out[j+16] = 0.25*float32(q&0x0c) - 1
			out[j+32] = 0.0625*float32(q&0x30) - 1
			out[j+48] = 0.015625*float32(q&0xc0) - 1
		}
	}
}
