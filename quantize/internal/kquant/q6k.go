package kquant

import "github.com/gquant/gquant/quantize/internal/kernel"

// q6_K block: ql[128], qh[64], scales[16] (int8), d.
const (
	q6Bytes  = 210
	q6Ql     = 0
	q6Qh     = 128
	q6Scales = 192
	q6D      = 208
)

// quantizeRowQ6K is quantize_q6_K for one row: make_qx_quants per 16 values
// (weights x² without an imatrix, the importance weights with one), then
// 8-bit scales relative to the largest.
func quantizeRowQ6K(dst []byte, x, qw []float32, s *scratch) {
	nb := len(x) / qk
	for ib := 0; ib < nb; ib++ {
		y := dst[ib*q6Bytes : (ib+1)*q6Bytes]
		xb := x[ib*qk : (ib+1)*qk]
		var maxScale, maxAbsScale float32
		for j := 0; j < 16; j++ {
			var w []float32
			if qw != nil {
				w = qw[ib*qk+16*j : ib*qk+16*j+16]
			}
			scale := s.search.MakeQxQuants(32, xb[16*j:16*j+16], s.Li[16*j:16*j+16], 1, w)
			s.scales[j] = scale
			if as := kernel.Abs32(scale); as > maxAbsScale {
				maxAbsScale, maxScale = as, scale
			}
		}
		if maxAbsScale < kernel.GroupMaxEps {
			clear(y)
			continue
		}
		iscale := -128 / maxScale
		putF16(y[q6D:], 1/iscale)
		for j := 0; j < 16; j++ {
			y[q6Scales+j] = uint8(int8(min(127, kernel.NearestIntMul(iscale, s.scales[j]))))
		}
		dAll := getF16(y[q6D:])
		for j := 0; j < 16; j++ {
			d := dAll * float32(int8(y[q6Scales+j]))
			if d == 0 {
				// the quants of the scale search stay
				for i := 16 * j; i < 16*j+16; i++ {
					s.L[i] = uint8(s.Li[i])
				}
				continue
			}
			requant(s.L[16*j:16*j+16], xb[16*j:16*j+16], 0, d, -32, 31, 32)
		}
		ql := y[q6Ql : q6Ql+128]
		qh := y[q6Qh : q6Qh+64]
		L := &s.L
		for j := 0; j < qk; j += 128 {
			for l := 0; l < 32; l++ {
				q1 := L[j+l] & 0xF
				q2 := L[j+l+32] & 0xF
				q3 := L[j+l+64] & 0xF
				q4 := L[j+l+96] & 0xF
				ql[j/2+l] = q1 | q3<<4
				ql[j/2+l+32] = q2 | q4<<4
				qh[j/4+l] = L[j+l]>>4 | (L[j+l+32]>>4)<<2 | (L[j+l+64]>>4)<<4 | (L[j+l+96]>>4)<<6
			}
		}
	}
}
