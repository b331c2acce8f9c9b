package formats

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
			for l := 0; l < 4; l++ {
				for i := 0; i < 4; i++ {
					sh := uint(2 * l)
					y[64*ib+4*k+i+16*l] = (x[i]>>sh)&3 | ((x[i+4]>>sh)&3)<<2 | ((x[i+8]>>sh)&3)<<4 | ((x[i+12]>>sh)&3)<<6
				}
			}
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
			x := base[k*rowBytes+4+16*ib : k*rowBytes+4+16*(ib+1)]
			for m := 0; m < 4; m++ {
				for i := 0; i < 4; i++ {
					var b byte
					for l := 0; l < 4; l++ {
						b |= ((y[64*ib+4*k+i+16*l] >> uint(2*m)) & 3) << uint(2*l)
					}
					x[i+4*m] = b
				}
			}
		}
	}
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
