package kquant

import (
	"fmt"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// q2_K block: scales[16] (4-bit scale | 4-bit min << 4), qs[64], d, dmin.
const (
	q2Bytes   = 84
	q2Scales  = 0
	q2Qs      = 16
	q2D       = 80
	q2DMin    = 82
	q2Q4Scale = float32(15)
)

// q2KKernel is quantize_q2_K: with an imatrix row by row; without one the
// reference quantizes the whole chunk as one long row, so the ternary check
// sees every row of the call.
func q2KKernel(search kernel.Search) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		if err := checkRow(formats.Q2_K, ne0); err != nil {
			return err
		}
		s := &scratch{search: search}
		if imatrix == nil {
			quantizeQ2KPlain(dst, src, s)
			return nil
		}
		rs := ne0 / qk * q2Bytes
		for r := 0; r < nrows; r++ {
			quantizeRowQ2KImatrix(dst[r*rs:(r+1)*rs], src[r*ne0:(r+1)*ne0], imatrix, s)
		}
		return nil
	}
}

// Q2KInCall is q2_K's kernel without importance data for rows that are part
// of a larger reference call, whose ternary check c has seen the whole call
// (the importance data it is given must be nil).
func Q2KInCall(o kernel.Options, c *TernaryCheck) kernel.Func {
	search := o.Search()
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		if err := checkRow(formats.Q2_K, ne0); err != nil {
			return err
		}
		if imatrix != nil {
			return fmt.Errorf("kquant: q2_K rows of a call take no importance data")
		}
		quantizeQ2KPlainChecked(dst, src, &scratch{search: search}, c.s.max, c.Ternary())
		return nil
	}
}

// quantizeRowQ2KAlone quantizes one row as its own quantize_q2_K call (how
// q2_k_r4 calls it).
func quantizeRowQ2KAlone(dst []byte, x, qw []float32, s *scratch) {
	if qw == nil {
		quantizeQ2KPlain(dst, x, s)
	} else {
		quantizeRowQ2KImatrix(dst, x, qw, s)
	}
}

// TernaryCheck is quantize_row_q2_K_ref's test whether a call's weights
// look ternary, {-m, 0, m} (the squared error of that fit is below a tenth
// of Σx², m = max|x|), over a call given in parts: AddMax over every part,
// then AddSums over every part in the call's order (its float32 sums are
// taken in index order, as the reference's). The zero value has seen
// nothing and is not ternary.
type TernaryCheck struct{ s ternarySums }

// AddMax takes the next values of the call into the largest magnitude.
// Without a NaN the order does not matter.
func (c *TernaryCheck) AddMax(x []float32) {
	if useAVX2 && len(x)%8 == 0 && len(x) > 0 {
		if m, nan := absMaxAVX2(&x[0], len(x)); !nan {
			c.s.max = maxf(c.s.max, m)
			return
		}
	}
	for _, v := range x {
		if v != v {
			c.s.nan = true
		}
		c.s.max = maxf(c.s.max, kernel.Abs32(v))
	}
}

// AddSums takes the next values of the call, after AddMax has seen all of
// them, into the squared sums.
func (c *TernaryCheck) AddSums(x []float32) {
	if useAVX2 && !c.s.nan && len(x) > 0 {
		ternarySumsAVX2(&x[0], len(x), &c.s)
		return
	}
	max := c.s.max
	half := 0.5 * max
	mse0, mse := c.s.mse0, c.s.mse
	for _, v := range x {
		l := ternaryLevel(v, half)
		// GCC vectorizes this loop: in-order sums of rounded products.
		mse0 += float32(v * v)
		diff := v - float32(max*float32(l)) // max*l is exact for l in {-1, 0, 1}
		mse += float32(diff * diff)
	}
	c.s.mse0, c.s.mse = mse0, mse
}

// Ternary reports whether the call's weights look ternary.
func (c *TernaryCheck) Ternary() bool { return c.s.mse < float32(0.1*c.s.mse0) }

// Max returns the call's largest magnitude (the ternary weights' m).
func (c *TernaryCheck) Max() float32 { return c.s.max }

// ternaryMax is the check over x alone: m = max|x| and whether x is
// ternary.
func ternaryMax(x []float32) (float32, bool) {
	var c TernaryCheck
	c.AddMax(x)
	c.AddSums(x)
	return c.s.max, c.Ternary()
}

// ternarySums is TernaryCheck's state, which ternarySumsAVX2 reads and
// updates: max|x|, Σx², the squared error of the ternary fit, and whether
// the call holds a NaN (then the portable loop takes the sums).
type ternarySums struct {
	max, mse0, mse float32
	nan            bool
}

func ternaryLevel(v, half float32) int {
	switch {
	case v < -half:
		return -1
	case v < half:
		return 0
	default:
		return 1
	}
}

// maxf is the reference's MAX(a, b) macro: a > b ? a : b.
func maxf(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

// quantizeQ2KPlain is quantize_row_q2_K_ref over x (any number of blocks).
func quantizeQ2KPlain(dst []byte, x []float32, s *scratch) {
	max, ternary := ternaryMax(x)
	quantizeQ2KPlainChecked(dst, x, s, max, ternary)
}

// quantizeQ2KPlainChecked is quantizeQ2KPlain for x within a call whose
// ternary check found max and ternary.
func quantizeQ2KPlainChecked(dst []byte, x []float32, s *scratch, max float32, ternary bool) {
	nb := len(x) / qk
	if ternary {
		half := 0.5 * max
		for ib := 0; ib < nb; ib++ {
			y := dst[ib*q2Bytes : (ib+1)*q2Bytes]
			putF16(y[q2D:], max)
			putF16(y[q2DMin:], max)
			for j := 0; j < 16; j++ {
				y[q2Scales+j] = 1 | 1<<4
			}
			for j, v := range x[ib*qk : (ib+1)*qk] {
				s.L[j] = uint8(ternaryLevel(v, half) + 1)
			}
			pack2(y[q2Qs:q2Qs+64], &s.L)
		}
		return
	}
	for ib := 0; ib < nb; ib++ {
		y := dst[ib*q2Bytes : (ib+1)*q2Bytes]
		xb := x[ib*qk : (ib+1)*qk]
		var maxScale, maxMin float32
		for j := 0; j < 16; j++ {
			xs := xb[16*j : 16*j+16]
			w := s.weights[:16]
			for l, v := range xs {
				w[l] = kernel.Abs32(v)
			}
			s.scales[j], s.mins[j] = s.search.MakeQkx2Quants(3, xs, w, s.L[16*j:16*j+16], s.laux[:16], -0.5, 0.1, 15, true, kernel.FusedProducts)
			if s.scales[j] > maxScale {
				maxScale = s.scales[j]
			}
			if s.mins[j] > maxMin {
				maxMin = s.mins[j]
			}
		}
		if maxScale > 0 {
			iscale := q2Q4Scale / maxScale
			for j := 0; j < 16; j++ {
				y[q2Scales+j] = uint8(kernel.NearestIntMul(iscale, s.scales[j]))
			}
			putF16(y[q2D:], maxScale/q2Q4Scale)
		} else {
			for j := 0; j < 16; j++ {
				y[q2Scales+j] = 0
			}
			putF16(y[q2D:], 0)
		}
		if maxMin > 0 {
			iscale := q2Q4Scale / maxMin
			for j := 0; j < 16; j++ {
				y[q2Scales+j] |= uint8(kernel.NearestIntMul(iscale, s.mins[j]) << 4)
			}
			putF16(y[q2DMin:], maxMin/q2Q4Scale)
		} else {
			putF16(y[q2DMin:], 0)
		}
		dAll, mAll := getF16(y[q2D:]), getF16(y[q2DMin:])
		for j := 0; j < 16; j++ {
			d := dAll * float32(y[q2Scales+j]&0xF)
			if d == 0 {
				continue
			}
			dm := mAll * float32(y[q2Scales+j]>>4)
			requant(s.L[16*j:16*j+16], xb[16*j:16*j+16], dm, d, 0, 3, 0)
		}
		pack2(y[q2Qs:q2Qs+64], &s.L)
	}
}

// quantizeRowQ2KImatrix is quantize_row_q2_K_impl.
func quantizeRowQ2KImatrix(dst []byte, x, qw []float32, s *scratch) {
	nb := len(x) / qk
	for ib := 0; ib < nb; ib++ {
		y := dst[ib*q2Bytes : (ib+1)*q2Bytes]
		xb := x[ib*qk : (ib+1)*qk]
		sigma2 := 0.75 * sumSquares(xb) / qk
		for j := 0; j < 16; j++ {
			xs := xb[16*j : 16*j+16]
			qws := qw[ib*qk+16*j : ib*qk+16*j+16]
			w := s.weights[:16]
			var sw float32
			kernel.ImatrixWeights(w, xs, qws, sigma2, useAVX2)
			for _, v := range w {
				sw += v
			}
			s.sw[j] = sw
			s.scales[j], s.mins[j] = s.search.MakeQkx3Quants(3, xs, w, s.L[16*j:16*j+16], s.laux[:16], -0.9, 0.05, 36, false, kernel.FusedProducts)
		}
		dm := s.search.MakeQpQuants(15, s.scales[:16], s.Ls[:16], s.sw[:16], kernel.FusedProducts)
		mm := s.search.MakeQpQuants(15, s.mins[:16], s.Lm[:16], s.sw[:16], kernel.FusedProducts)
		putF16(y[q2D:], dm)
		putF16(y[q2DMin:], mm)
		for j := 0; j < 16; j++ {
			d := dm * float32(s.Ls[j])
			var id float32
			if d != 0 {
				id = 1 / d
			}
			// m = mm*Lm[j] is fused into x + m (roundShifted).
			roundShifted(s.L[16*j:16*j+16], xb[16*j:16*j+16], mm, float32(s.Lm[j]), id, 3)
		}
		for j := 0; j < 16; j++ {
			y[q2Scales+j] = s.Ls[j] | s.Lm[j]<<4
		}
		pack2(y[q2Qs:q2Qs+64], &s.L)
	}
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
