package fit

import "math"

// Stats accumulates the error of one tensor quantized as one type over
// sampled rows. Each row r of matrix m contributes, with the matrix's weight
// c (its call count in the importance matrix, or 1),
//
//	num_r = c * sum_j v_j (w_j - q_j)^2    den_r = c * sum_j v_j w_j^2
//
// and the tensor's relative error is sum num / sum den, a ratio estimator
// whose standard error comes from the second moments kept here.
type Stats struct {
	N                  float64 // rows
	Num, Den           float64
	Num2, Den2, NumDen float64
}

// Add accumulates one row.
func (s *Stats) Add(num, den float64) {
	s.N++
	s.Num += num
	s.Den += den
	s.Num2 += num * num
	s.Den2 += den * den
	s.NumDen += num * den
}

// Merge adds the rows of o; a broken part breaks the whole.
func (s *Stats) Merge(o Stats) {
	if s.Broken() || o.Broken() {
		*s = broken
		return
	}
	s.N += o.N
	s.Num += o.Num
	s.Den += o.Den
	s.Num2 += o.Num2
	s.Den2 += o.Den2
	s.NumDen += o.NumDen
}

// Broken marks a measurement whose dequantized weights were not finite
// (the type's kernel fails on the data, as some do on all-zero importance):
// the type cannot be used. It is kept as N = -1.
func (s Stats) Broken() bool { return s.N < 0 }

// broken is the Stats of a failed measurement.
var broken = Stats{N: -1}

// Err is the relative error: 0 when no row carries any signal, +Inf when
// the measurement is broken.
func (s Stats) Err() float64 {
	if s.Broken() {
		return math.Inf(1)
	}
	if s.Den <= 0 {
		return 0
	}
	return s.Num / s.Den
}

// SE is the standard error of Err (the ratio estimator's linearised
// variance), 0 with fewer than two rows.
func (s Stats) SE() float64 {
	if s.N < 2 || s.Broken() || s.Den <= 0 {
		return 0
	}
	r := s.Num / s.Den
	n := s.N
	mNum, mDen := s.Num/n, s.Den/n
	// Sample variance of num_r - r*den_r.
	v := (s.Num2 - 2*r*s.NumDen + r*r*s.Den2 - n*(mNum-r*mDen)*(mNum-r*mDen)) / (n - 1)
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v/n) / mDen
}
