package formats

import "encoding/binary"

// iq2_bn_r4 stores four iq2_bn rows together: the four row scales (float32)
// first, then per 64-weight block 64 bytes in which byte 4*k+i+16*l packs,
// from low to high bits, 2-bit field l of bytes i, i+4, i+8, i+12 of row k's
// block. It is a pure shuffle of 2-bit fields (the reference's repack_iq2_bn).

func init() {
	registerInterleaver(IQ2_BN_R4, interleaver{interleave: interleaveIQ2BN, deinterleave: deinterleaveIQ2BN})
	registerDequantizer(IQ2_BN_R4, dequantIQ2BNR4)
}

const bnBlockSize = 64

func interleaveIQ2BN(group, base []byte, ne0 int) {
	rowBytes := 4 + ne0/4
	for k := 0; k < 4; k++ {
		copy(group[4*k:4*k+4], base[k*rowBytes:k*rowBytes+4])
	}
	y := group[16:]
	for ib := 0; ib < ne0/bnBlockSize; ib++ {
		for k := 0; k < 4; k++ {
			x := base[k*rowBytes+4+16*ib:]
			o := y[64*ib+4*k:]
			o0, o1, o2, o3 := transpose2BitFields(binary.LittleEndian.Uint32(x), binary.LittleEndian.Uint32(x[4:]), binary.LittleEndian.Uint32(x[8:]), binary.LittleEndian.Uint32(x[12:]))
			binary.LittleEndian.PutUint32(o, o0)
			binary.LittleEndian.PutUint32(o[16:], o1)
			binary.LittleEndian.PutUint32(o[32:], o2)
			binary.LittleEndian.PutUint32(o[48:], o3)
		}
	}
}

func deinterleaveIQ2BN(base, group []byte, ne0 int) {
	rowBytes := 4 + ne0/4
	for k := 0; k < 4; k++ {
		copy(base[k*rowBytes:k*rowBytes+4], group[4*k:4*k+4])
	}
	y := group[16:]
	for ib := 0; ib < ne0/bnBlockSize; ib++ {
		for k := 0; k < 4; k++ {
			in := y[64*ib+4*k:]
			x := base[k*rowBytes+4+16*ib:]
			x0, x1, x2, x3 := transpose2BitFields(binary.LittleEndian.Uint32(in), binary.LittleEndian.Uint32(in[16:]), binary.LittleEndian.Uint32(in[32:]), binary.LittleEndian.Uint32(in[48:]))
			binary.LittleEndian.PutUint32(x, x0)
			binary.LittleEndian.PutUint32(x[4:], x1)
			binary.LittleEndian.PutUint32(x[8:], x2)
			binary.LittleEndian.PutUint32(x[12:], x3)
		}
	}
}

// transpose2BitFields treats w0..w3 as a 4x4 matrix of 2-bit fields per byte
// lane: field l of byte i of output word a is field a of byte i of input word
// l. The iq2_bn_r4 shuffle is this transpose on the words of four bytes
// i, i+4, i+8, i+12 of a block, and it is its own inverse, so one function
// serves both directions, four bytes at a time.
func transpose2BitFields(w0, w1, w2, w3 uint32) (o0, o1, o2, o3 uint32) {
	const m = 0x03030303
	field := func(a uint) uint32 {
		return w0>>a&m | (w1>>a&m)<<2 | (w2>>a&m)<<4 | (w3>>a&m)<<6
	}
	return field(0), field(2), field(4), field(6)
}

// dequantIQ2BNR4 is the reference's own iq2_bn_r4 dequantizer: unlike the
// iq2_bn one it reads the four row scales and applies them.
func dequantIQ2BNR4(dst []float32, src []byte, ne0 int) {
	var d [4]float32
	for k := range d {
		d[k] = bnLEF32(src[4*k:])
	}
	qx := src[16:]
	for ib := 0; ib < ne0/bnBlockSize; ib++ {
		for k := 0; k < 4; k++ {
			y := dst[k*ne0+64*ib:]
			for l := 0; l < 4; l++ {
				for i := 0; i < 4; i++ {
					q := qx[4*k+i+16*l]
					y[16*l+i+0] = d[k] * float32(int(q>>0&3)-1)
					y[16*l+i+4] = d[k] * float32(int(q>>2&3)-1)
					y[16*l+i+8] = d[k] * float32(int(q>>4&3)-1)
					y[16*l+i+12] = d[k] * float32(int(q>>6&3)-1)
				}
			}
		}
		qx = qx[64:]
	}
}
