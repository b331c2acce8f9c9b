package formats

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/internal/tables"
)

// Dequantizers of the plain float types, the 32-weight block types (q4_0 ..
// q8_0, q6_0, mxfp4), q1_0_g128 and the per-row-scaled q8_KV / q8_KV_r8.
//
// Precision: every expression here is one float32 product (or a product and
// a sum) whose product is exact in float32: an fp16 scale has 11 significant
// bits and the quant at most 6, so a fused multiply-add in the reference
// rounds exactly like a separate multiply and add. The products are still
// written with explicit float32 conversions so the Go compiler cannot fuse
// them either.

func init() {
	registerDequantizer(F32, dequantF32)
	registerDequantizer(F16, dequantF16)
	registerDequantizer(BF16, dequantBF16)
	registerDequantizer(Q4_0, dequantQ4_0)
	registerDequantizer(Q4_1, dequantQ4_1)
	registerDequantizer(Q5_0, dequantQ5_0)
	registerDequantizer(Q5_1, dequantQ5_1)
	registerDequantizer(Q6_0, dequantQ6_0)
	registerDequantizer(Q8_0, dequantQ8_0)
	registerDequantizer(Q1_0_G128, dequantQ1_0G128)
	registerDequantizer(MXFP4, dequantMXFP4)
	registerDequantizer(Q8_KV, dequantQ8KV)
	registerDequantizer(Q8_KV_R8, dequantQ8KVR8)
}

// fp16At reads the little-endian fp16 at b[0:2] as float32.
func fp16At(b []byte) float32 { return FP16ToFP32(binary.LittleEndian.Uint16(b)) }

func dequantF32(dst []float32, src []byte, ne0 int) {
	for i := range ne0 {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func dequantF16(dst []float32, src []byte, ne0 int) {
	for i := range ne0 {
		dst[i] = FP16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func dequantBF16(dst []float32, src []byte, ne0 int) {
	BF16RowToFP32(dst[:ne0], src[:2*ne0])
}

// q4_0: fp16 d, 16 bytes of nibbles; weight j is the low nibble of byte j,
// weight j+16 the high nibble; value d*(q-8).
func dequantQ4_0(dst []float32, src []byte, ne0 int) {
	const bs = 18
	for ib := range ne0 / 32 {
		b := src[ib*bs : (ib+1)*bs]
		d := fp16At(b)
		y := dst[ib*32 : (ib+1)*32]
		for j := range 16 {
			q := b[2+j]
			y[j] = float32(int(q&0xf)-8) * d
			y[j+16] = float32(int(q>>4)-8) * d
		}
	}
}

// q4_1: fp16 d and m, nibbles as q4_0; value d*q + m.
func dequantQ4_1(dst []float32, src []byte, ne0 int) {
	const bs = 20
	for ib := range ne0 / 32 {
		b := src[ib*bs : (ib+1)*bs]
		d, m := fp16At(b), fp16At(b[2:])
		y := dst[ib*32 : (ib+1)*32]
		for j := range 16 {
			q := b[4+j]
			y[j] = float32(float32(q&0xf)*d) + m
			y[j+16] = float32(float32(q>>4)*d) + m
		}
	}
}

// q5_0: fp16 d, 32 fifth bits (bit j for weight j), nibbles as q4_0; value d*(q-16).
func dequantQ5_0(dst []float32, src []byte, ne0 int) {
	const bs = 22
	for ib := range ne0 / 32 {
		b := src[ib*bs : (ib+1)*bs]
		d := fp16At(b)
		qh := binary.LittleEndian.Uint32(b[2:])
		y := dst[ib*32 : (ib+1)*32]
		for j := range 16 {
			q := b[6+j]
			x0 := int(q&0xf) | int(qh>>j&1)<<4
			x1 := int(q>>4) | int(qh>>(j+16)&1)<<4
			y[j] = float32(x0-16) * d
			y[j+16] = float32(x1-16) * d
		}
	}
}

// q5_1: fp16 d and m, then as q5_0; value d*q + m.
func dequantQ5_1(dst []float32, src []byte, ne0 int) {
	const bs = 24
	for ib := range ne0 / 32 {
		b := src[ib*bs : (ib+1)*bs]
		d, m := fp16At(b), fp16At(b[2:])
		qh := binary.LittleEndian.Uint32(b[4:])
		y := dst[ib*32 : (ib+1)*32]
		for j := range 16 {
			q := b[8+j]
			x0 := int(q&0xf) | int(qh>>j&1)<<4
			x1 := int(q>>4) | int(qh>>(j+16)&1)<<4
			y[j] = float32(float32(x0)*d) + m
			y[j+16] = float32(float32(x1)*d) + m
		}
	}
}

// q6_0: fp16 d, 8 bytes of high bit pairs, nibbles as q4_0; value d*(q-32).
// Byte j%8 of the high bits holds, from bit 0 up: weight j, weight j+16 for
// j < 8, then weight j, weight j+16 for 8 <= j < 16 (two bits each).
func dequantQ6_0(dst []float32, src []byte, ne0 int) {
	const bs = 26
	for ib := range ne0 / 32 {
		b := src[ib*bs : (ib+1)*bs]
		d := fp16At(b)
		qh, qs := b[2:10], b[10:26]
		y := dst[ib*32 : (ib+1)*32]
		for j := range 16 {
			h := qh[j%8] >> (4 * (j / 8))
			x0 := int(qs[j]&0xf) | int(h&3)<<4
			x1 := int(qs[j]>>4) | int(h>>2&3)<<4
			y[j] = float32(x0-32) * d
			y[j+16] = float32(x1-32) * d
		}
	}
}

// q8_0: fp16 d, 32 int8; value q*d.
func dequantQ8_0(dst []float32, src []byte, ne0 int) {
	const bs = 34
	for ib := range ne0 / 32 {
		b := src[ib*bs : (ib+1)*bs]
		d := fp16At(b)
		y := dst[ib*32 : (ib+1)*32]
		for j := range 32 {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
}

// q1_0_g128: fp16 d, 128 sign bits (bit j%8 of byte j/8); value +d or -d.
func dequantQ1_0G128(dst []float32, src []byte, ne0 int) {
	const bs = 18
	for ib := range ne0 / 128 {
		b := src[ib*bs : (ib+1)*bs]
		d := fp16At(b)
		y := dst[ib*128 : (ib+1)*128]
		for j := range 128 {
			if b[2+j/8]>>(j%8)&1 != 0 {
				y[j] = d
			} else {
				y[j] = -d
			}
		}
	}
}

// E8M0ToFP32Half returns half of the power of two 2^(e-127) an e8m0 byte
// encodes, as the reference does (subnormal for e = 0 and e = 1).
func E8M0ToFP32Half(e uint8) float32 {
	switch e {
	case 0:
		return math.Float32frombits(0x00200000)
	case 1:
		return math.Float32frombits(0x00400000)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// mxfp4: e8m0 scale byte, 16 bytes of nibbles laid out as q4_0; value d*fp4(q).
func dequantMXFP4(dst []float32, src []byte, ne0 int) {
	const bs = 17
	for ib := range ne0 / 32 {
		b := src[ib*bs : (ib+1)*bs]
		d := E8M0ToFP32Half(b[0])
		y := dst[ib*32 : (ib+1)*32]
		for j := range 16 {
			q := b[1+j]
			y[j] = d * float32(tables.MXFP4Values[q&0xf])
			y[j+16] = d * float32(tables.MXFP4Values[q>>4])
		}
	}
}

// q8_KV: a row header of float32 d and int32 sum of the quants, then one
// int8 per weight; value d*q.
func dequantQ8KV(dst []float32, src []byte, ne0 int) {
	d := math.Float32frombits(binary.LittleEndian.Uint32(src))
	q := src[8 : 8+ne0]
	for j := range ne0 {
		dst[j] = d * float32(int8(q[j]))
	}
}

// q8_KV_r8: the float32 d of 8 rows, then their int8 quants interleaved in
// groups of 4 (see interleaveQ8KV); value d*q.
func dequantQ8KVR8(dst []float32, src []byte, ne0 int) {
	q := src[32:]
	for k := range 8 {
		d := math.Float32frombits(binary.LittleEndian.Uint32(src[4*k:]))
		y := dst[k*ne0 : (k+1)*ne0]
		for ib := range ne0 / 16 {
			for l := range 4 {
				for i := range 4 {
					y[16*ib+4*l+i] = d * float32(int8(q[128*ib+32*l+4*k+i]))
				}
			}
		}
	}
}
