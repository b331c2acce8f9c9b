package kquant

import "github.com/gquant/gquant/quantize/internal/kernel"

// q4_K block: d, dmin, scales[12] (8 6-bit scales and mins), qs[128].
// q5_K block: d, dmin, scales[12], qh[32], qs[128].
const (
	q4Bytes  = 144
	q5Bytes  = 176
	q45D     = 0
	q45DMin  = 2
	q45Scale = 4
	q4Qs     = 16
	q5Qh     = 16
	q5Qs     = 48
)

// quantizeRowQ4K is quantize_q4_K for one row.
func quantizeRowQ4K(dst []byte, x, qw []float32, s *scratch) {
	nb := len(x) / qk
	for ib := 0; ib < nb; ib++ {
		y := dst[ib*q4Bytes : (ib+1)*q4Bytes]
		xb := x[ib*qk : (ib+1)*qk]
		if qw == nil {
			q45ScalesPlain(y, xb, 15, -1, 0.1, 20, s)
		} else {
			q45ScalesImatrix(y, xb, qw[ib*qk:(ib+1)*qk], 15, s)
		}
		q45Requantize(y, xb, 15, s)
		q := y[q4Qs : q4Qs+128]
		for j := 0; j < qk; j += 64 {
			for l := 0; l < 32; l++ {
				q[j/2+l] = s.L[j+l] | s.L[j+l+32]<<4
			}
		}
	}
}

// quantizeRowQ5K is quantize_q5_K for one row.
func quantizeRowQ5K(dst []byte, x, qw []float32, s *scratch) {
	nb := len(x) / qk
	for ib := 0; ib < nb; ib++ {
		y := dst[ib*q5Bytes : (ib+1)*q5Bytes]
		xb := x[ib*qk : (ib+1)*qk]
		if qw == nil {
			q45ScalesPlain(y, xb, 31, -0.5, 0.1, 15, s)
		} else {
			q45ScalesImatrix(y, xb, qw[ib*qk:(ib+1)*qk], 31, s)
		}
		q45Requantize(y, xb, 31, s)
		qh := y[q5Qh : q5Qh+32]
		ql := y[q5Qs : q5Qs+128]
		// The quants are at most 31: bit 4 goes to qh (bits 2k and 2k+1
		// for the k-th pair of 32-value groups), the low four bits to ql.
		for j := 0; j < 32; j++ {
			var h uint8
			for k := 0; k < 4; k++ {
				l1, l2 := s.L[64*k+j], s.L[64*k+j+32]
				h |= (l1>>4)<<(2*k) | (l2>>4)<<(2*k+1)
				ql[32*k+j] = l1&0xF | (l2&0xF)<<4
			}
			qh[j] = h
		}
	}
}

// q45ScalesPlain is the scale search of quantize_row_q4_K_ref and
// quantize_row_q5_K_ref: per 32 values make_qkx2_quants with weights
// rms + |x|, then the scales and mins on 6 bits relative to their maximum.
func q45ScalesPlain(y []byte, xb []float32, nmax int, rmin, rdelta float32, nstep int, s *scratch) {
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := xb[32*j : 32*j+32]
		avX := kernel.Sqrt32(sumSquares(xs) / 32)
		w := s.weights[:32]
		for l, v := range xs {
			w[l] = avX + kernel.Abs32(v)
		}
		s.scales[j], s.mins[j] = s.search.MakeQkx2Quants(nmax, xs, w, s.L[32*j:32*j+32], s.laux[:32], rmin, rdelta, nstep, false, kernel.RoundedProducts)
		if s.scales[j] > maxScale {
			maxScale = s.scales[j]
		}
		if s.mins[j] > maxMin {
			maxMin = s.mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := y[q45Scale : q45Scale+12]
	for j := 0; j < 8; j++ {
		ls := min(63, uint8(kernel.NearestIntMul(invScale, s.scales[j])))
		lm := min(63, uint8(kernel.NearestIntMul(invMin, s.mins[j])))
		packScaleMin6(sc, j, ls, lm)
	}
	putF16(y[q45D:], maxScale/63)
	putF16(y[q45DMin:], maxMin/63)
}

// q45ScalesImatrix is the scale search of quantize_row_q4_K_impl and
// quantize_row_q5_K_impl: make_qkx3_quants per 32 values, then
// make_qp_quants over the scales and over the mins.
func q45ScalesImatrix(y []byte, xb, qw []float32, nmax int, s *scratch) {
	sigma2 := 2 * sumSquares(xb) / qk
	for j := 0; j < 8; j++ {
		xs := xb[32*j : 32*j+32]
		w := s.weights[:32]
		kernel.ImatrixWeights(w, xs, qw[32*j:32*j+32], sigma2, useAVX2)
		var sw float32
		for _, v := range w {
			sw += v
		}
		s.sw[j] = sw
		s.scales[j], s.mins[j] = s.search.MakeQkx3Quants(nmax, xs, w, s.L[32*j:32*j+32], s.laux[:32], -0.9, 0.05, 36, false, kernel.RoundedProducts)
	}
	dBlock := s.search.MakeQpQuants(63, s.scales[:8], s.Ls[:8], s.sw[:8], kernel.FusedProducts)
	mBlock := s.search.MakeQpQuants(63, s.mins[:8], s.Lm[:8], s.sw[:8], kernel.FusedProducts)
	sc := y[q45Scale : q45Scale+12]
	for j := 0; j < 8; j++ {
		// q5_K clamps to 63 here, q4_K does not; make_qp_quants never
		// returns more than 63 so both are the same.
		packScaleMin6(sc, j, min(63, s.Ls[j]), min(63, s.Lm[j]))
	}
	putF16(y[q45D:], dBlock)
	putF16(y[q45DMin:], mBlock)
}

// q45Requantize recomputes the quants with the stored (fp16, 6-bit) scales.
func q45Requantize(y []byte, xb []float32, nmax int, s *scratch) {
	sc := y[q45Scale : q45Scale+12]
	dAll, mAll := getF16(y[q45D:]), getF16(y[q45DMin:])
	for j := 0; j < 8; j++ {
		ls, lm := scaleMin6(j, sc)
		d := dAll * float32(ls)
		if d == 0 {
			continue
		}
		dm := mAll * float32(lm)
		requant(s.L[32*j:32*j+32], xb[32*j:32*j+32], dm, d, 0, nmax, 0)
	}
}
