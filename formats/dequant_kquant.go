package formats

import (
	"encoding/binary"
	"math"
)

// Dequantizers of the k-quants (256-weight super-blocks) and of q8_k_r8,
// whose fp16 row scales make it more than a shuffle of q8_K.
//
// Precision: the reference computes d*scale first, then d*scale*q (- min*m).
// d*scale*q is exact in float32 for q2_K..q5_K (11+6+5 significant bits), so
// the fused multiply-subtract GCC emits rounds exactly like the separate
// operations written here; q6_K has no addition and multiplies left to right.

func init() {
	registerDequantizer(Q2_K, dequantQ2K)
	registerDequantizer(Q3_K, dequantQ3K)
	registerDequantizer(Q4_K, dequantQ4K)
	registerDequantizer(Q5_K, dequantQ5K)
	registerDequantizer(Q6_K, dequantQ6K)
	registerDequantizer(Q8_K, dequantQ8K)
	registerDequantizer(Q8_K_R8, dequantQ8KR8)
}

const qkK = 256 // weights per k-quant super-block

// Byte offsets inside the k-quant blocks (ggml-common.h).
const (
	q2KScales, q2KQs, q2KD, q2KDmin, q2KSize        = 0, 16, 80, 82, 84
	q3KHmask, q3KQs, q3KScales, q3KD, q3KSize       = 0, 32, 96, 108, 110
	q4KD, q4KDmin, q4KScales, q4KQs, q4KSize        = 0, 2, 4, 16, 144
	q5KD, q5KDmin, q5KScales, q5KQh, q5KQs, q5KSize = 0, 2, 4, 16, 48, 176
	q6KQl, q6KQh, q6KScales, q6KD, q6KSize          = 0, 128, 192, 208, 210
	q8KD, q8KQs, q8KSize                            = 0, 8, 296
	q8KR8D, q8KR8Qs, q8KR8Size                      = 0, 16, 8 * 258
)

// q2_K: 16 sub-blocks of 16; scale byte = 4-bit scale | 4-bit min << 4;
// 2-bit quants, byte l of each 32-byte half holds weights l, l+32, l+64, l+96
// of that half in bit pairs; value d*sc*q - dmin*m.
func dequantQ2K(dst []float32, src []byte, ne0 int) {
	for ibl := range ne0 / qkK {
		b := src[ibl*q2KSize : (ibl+1)*q2KSize]
		d, dmin := fp16At(b[q2KD:]), fp16At(b[q2KDmin:])
		y := dst[ibl*qkK : (ibl+1)*qkK]
		for half := range 2 {
			q := b[q2KQs+32*half : q2KQs+32*half+32]
			for j := range 4 {
				shift := 2 * j
				for s := range 2 { // two sub-blocks of 16 per bit pair
					sc := b[q2KScales+8*half+2*j+s]
					dl := d * float32(sc&0xf)
					ml := dmin * float32(sc>>4)
					out := y[128*half+32*j+16*s:]
					for l := range 16 {
						out[l] = float32(dl*float32(q[16*s+l]>>shift&3)) - ml
					}
				}
			}
		}
	}
}

// q3KUnpackScales unpacks the 16 6-bit scales of a q3_K block (stored +32): the low
// nibbles in bytes 0..7 (scales 0..7 low, 8..15 high nibble), the top two
// bits in bytes 8..11 (scale j at bits 2*(j/4) of byte 8+j%4).
func q3KUnpackScales(s []byte) (ls [16]uint8) {
	for j := range 16 {
		lo := s[j%8] >> (4 * (j / 8)) & 0xf
		hi := s[8+j%4] >> (2 * (j / 4)) & 3
		ls[j] = lo | hi<<4
	}
	return ls
}

// q3KPackScales is the inverse of q3KUnpackScales.
func q3KPackScales(s []byte, ls *[16]uint8) {
	clear(s[:12])
	for j := range 16 {
		s[j%8] |= (ls[j] & 0xf) << (4 * (j / 8))
		s[8+j%4] |= (ls[j] >> 4) << (2 * (j / 4))
	}
}

// q3_K: 2 low bits as q2_K, the third bit in hmask (bit 4*half+j of byte l
// for weight 128*half+32*j+l), set meaning +0 and clear meaning -4;
// value d*(sc-32)*q.
func dequantQ3K(dst []float32, src []byte, ne0 int) {
	for ibl := range ne0 / qkK {
		b := src[ibl*q3KSize : (ibl+1)*q3KSize]
		d := fp16At(b[q3KD:])
		sc := q3KUnpackScales(b[q3KScales:])
		hm := b[q3KHmask : q3KHmask+32]
		y := dst[ibl*qkK : (ibl+1)*qkK]
		is := 0
		for half := range 2 {
			q := b[q3KQs+32*half : q3KQs+32*half+32]
			for j := range 4 {
				shift := 2 * j
				mask := byte(1) << (4*half + j)
				for s := range 2 {
					dl := d * float32(int(sc[is])-32)
					is++
					out := y[128*half+32*j+16*s:]
					for l := range 16 {
						v := int(q[16*s+l] >> shift & 3)
						if hm[16*s+l]&mask == 0 {
							v -= 4
						}
						out[l] = dl * float32(v)
					}
				}
			}
		}
	}
}

// kScaleMin returns scale and min j (0..7) of the 12-byte 6-bit packing
// shared by q4_K and q5_K.
func kScaleMin(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// kPackScaleMin is the inverse of kScaleMin over all eight pairs.
func kPackScaleMin(q []byte, sc, m *[8]uint8) {
	for j := range 4 {
		q[j] = sc[j] | (sc[j+4]>>4)<<6
		q[j+4] = m[j] | (m[j+4]>>4)<<6
		q[j+8] = sc[j+4]&0xf | (m[j+4]&0xf)<<4
	}
}

// q4_K: 8 sub-blocks of 32; byte l of each 32-byte chunk holds weight l
// (low nibble) and l+32 (high) of a 64-weight stretch; value d*sc*q - dmin*m.
func dequantQ4K(dst []float32, src []byte, ne0 int) {
	for ibl := range ne0 / qkK {
		b := src[ibl*q4KSize : (ibl+1)*q4KSize]
		d, dmin := fp16At(b[q4KD:]), fp16At(b[q4KDmin:])
		scales := b[q4KScales : q4KScales+12]
		y := dst[ibl*qkK : (ibl+1)*qkK]
		for c := range 4 {
			q := b[q4KQs+32*c : q4KQs+32*c+32]
			sc, m := kScaleMin(2*c, scales)
			d1, m1 := d*float32(sc), dmin*float32(m)
			sc, m = kScaleMin(2*c+1, scales)
			d2, m2 := d*float32(sc), dmin*float32(m)
			out := y[64*c : 64*c+64]
			for l := range 32 {
				out[l] = float32(d1*float32(q[l]&0xf)) - m1
				out[l+32] = float32(d2*float32(q[l]>>4)) - m2
			}
		}
	}
}

// q5_K: q4_K plus a fifth bit per weight: bit 2c (weight l of chunk c) and
// 2c+1 (weight l+32) of qh[l].
func dequantQ5K(dst []float32, src []byte, ne0 int) {
	for ibl := range ne0 / qkK {
		b := src[ibl*q5KSize : (ibl+1)*q5KSize]
		d, dmin := fp16At(b[q5KD:]), fp16At(b[q5KDmin:])
		scales := b[q5KScales : q5KScales+12]
		qh := b[q5KQh : q5KQh+32]
		y := dst[ibl*qkK : (ibl+1)*qkK]
		for c := range 4 {
			q := b[q5KQs+32*c : q5KQs+32*c+32]
			sc, m := kScaleMin(2*c, scales)
			d1, m1 := d*float32(sc), dmin*float32(m)
			sc, m = kScaleMin(2*c+1, scales)
			d2, m2 := d*float32(sc), dmin*float32(m)
			out := y[64*c : 64*c+64]
			for l := range 32 {
				h := qh[l] >> (2 * c)
				out[l] = float32(d1*float32(q[l]&0xf|(h&1)<<4)) - m1
				out[l+32] = float32(d2*float32(q[l]>>4|(h>>1&1)<<4)) - m2
			}
		}
	}
}

// q6_K: 16 int8 scales of 16 weights; per 128-weight half, ql[l] and
// ql[l+32] hold four weights' low nibbles, qh[l] their top bit pairs;
// value d*sc*(q-32).
func dequantQ6K(dst []float32, src []byte, ne0 int) {
	for ibl := range ne0 / qkK {
		b := src[ibl*q6KSize : (ibl+1)*q6KSize]
		d := fp16At(b[q6KD:])
		y := dst[ibl*qkK : (ibl+1)*qkK]
		for half := range 2 {
			ql := b[q6KQl+64*half : q6KQl+64*half+64]
			qh := b[q6KQh+32*half : q6KQh+32*half+32]
			sc := b[q6KScales+8*half : q6KScales+8*half+8]
			out := y[128*half : 128*half+128]
			for l := range 32 {
				is := l / 16
				q1 := int(ql[l]&0xf|(qh[l]&3)<<4) - 32
				q2 := int(ql[l+32]&0xf|(qh[l]>>2&3)<<4) - 32
				q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
				out[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
				out[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				out[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				out[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
		}
	}
}

// q8_K: float32 d, float32 sum, 256 int8, 16 int16 group sums; value d*q.
func dequantQ8K(dst []float32, src []byte, ne0 int) {
	for ibl := range ne0 / qkK {
		b := src[ibl*q8KSize : (ibl+1)*q8KSize]
		d := math.Float32frombits(binary.LittleEndian.Uint32(b[q8KD:]))
		y := dst[ibl*qkK : (ibl+1)*qkK]
		for j := range qkK {
			y[j] = d * float32(int8(b[q8KQs+j]))
		}
	}
}

// q8_k_r8: per super-block the fp16 d of 8 rows, then their int8 quants in
// groups of 4: byte 32*g+4*k+i is weight 4*g+i of row k; value d*q.
func dequantQ8KR8(dst []float32, src []byte, ne0 int) {
	for ibl := range ne0 / qkK {
		b := src[ibl*q8KR8Size : (ibl+1)*q8KR8Size]
		for k := range 8 {
			d := fp16At(b[q8KR8D+2*k:])
			y := dst[k*ne0+ibl*qkK : k*ne0+(ibl+1)*qkK]
			for g := range qkK / 4 {
				for i := range 4 {
					y[4*g+i] = d * float32(int8(b[q8KR8Qs+32*g+4*k+i]))
				}
			}
		}
	}
}
