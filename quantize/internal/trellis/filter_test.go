package trellis

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// filterEstimate is the filtered search's estimate of a candidate's score,
// Σ (wq)(q+n) with n = -2x, rounded as filter512_amd64.s rounds it: the
// products wq and the sums q+n rounded, the first term's product rounded,
// the others added with fused multiply-adds, in coordinate order.
func filterEstimate(q *[8]int8, x, w *[8]float32) float32 {
	var acc float32
	for k := 0; k < 8; k++ {
		qk := float32(q[k])
		a, b := float32(qk*w[k]), float32(qk+(-2*x[k]))
		if k == 0 {
			acc = float32(a * b)
		} else {
			acc = kernel.FMA32(a, b, acc)
		}
	}
	return acc
}

// filterScore is the reference's float32 score of the candidate (SCORE16's
// roundings and order of additions).
func filterScore(q *[8]int8, x, w *[8]float32) float32 {
	var t [8]float32
	for k := range t {
		d := float32(float32(q[k]) - x[k])
		t[k] = float32(float32(d*d) * w[k])
	}
	return float32(float32(t[0]+t[4])+float32(t[2]+t[6])) + float32(float32(t[1]+t[5])+float32(t[3]+t[7]))
}

// filterBound is S = Σ w(127+|x|)² and the margin S·2^-16 + 2^-120, as the
// search computes them (the sum's order aside: S has slack to spare).
func filterBound(x, w *[8]float32) (s, margin float32) {
	for k := range x {
		a := float32(127 + abs32(x[k]))
		s += float32(float32(a*a) * w[k])
	}
	return s, float32(s*0x1p-16) + 0x1p-120
}

// exactSum is Σ w·f(q, x) in exact arithmetic.
func exactSum(q *[8]int8, x, w *[8]float32, f func(q, x *big.Float) *big.Float) *big.Float {
	sum := new(big.Float).SetPrec(512)
	for k := range x {
		qk := new(big.Float).SetPrec(512).SetInt64(int64(q[k]))
		xk := new(big.Float).SetPrec(512).SetFloat64(float64(x[k]))
		t := f(qk, xk)
		t.Mul(t, new(big.Float).SetPrec(512).SetFloat64(float64(w[k])))
		sum.Add(sum, t)
	}
	return sum
}

// TestFilterMargin checks the argument of filter.go on random candidates
// over the whole range the filter takes (inputs up to 2^60, weights from
// zero and subnormal to large, S below 2^100), and on pairs of candidates
// one step apart (scores close to a tie): the estimate is within 11·2^-24·S
// of its exact value, the reference's score within 7.1·2^-24 of the exact
// score (plus subnormal noise), and whenever the reference scores a
// candidate no higher than another, its estimate is at most the other's
// plus the margin.
func TestFilterMargin(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	const u = 0x1p-24
	trials := 20000
	if testing.Short() {
		trials = 2000
	}
	mag := func(lo, hi int) float32 { return float32(math.Ldexp(1+r.Float64(), lo+r.IntN(hi-lo+1))) }
	checked := 0
	for trial := 0; trial < trials; trial++ {
		var x, w [8]float32
		scale := [...]int{0, 4, 7, 20, 60}[r.IntN(5)]
		for k := range x {
			x[k] = mag(-30, scale)
			if r.IntN(2) == 0 {
				x[k] = -x[k]
			}
			switch r.IntN(8) {
			case 0:
				w[k] = 0
			case 1:
				w[k] = mag(-149, -127) // subnormal
			default:
				w[k] = mag(-40, 20)
			}
		}
		s, margin := filterBound(&x, &w)
		if !(s < 0x1p100) {
			continue // the filter hands these to the full pass
		}
		var a, b [8]int8
		for k := range a {
			a[k] = int8(r.IntN(253) - 126)
		}
		b = a
		k := r.IntN(8)
		b[k] = int8(max(-126, min(126, int(b[k])+[...]int{-1, 1}[r.IntN(2)])))
		for _, q := range []*[8]int8{&a, &b} {
			est := filterEstimate(q, &x, &w)
			exact := exactSum(q, &x, &w, func(q, x *big.Float) *big.Float {
				t := new(big.Float).SetPrec(512).Mul(x, big.NewFloat(-2))
				t.Add(t, q)
				return t.Mul(t, q)
			})
			diff, _ := new(big.Float).Sub(new(big.Float).SetPrec(512).SetFloat64(float64(est)), exact).Float64()
			if math.Abs(diff) > 11*u*float64(s)+0x1p-140 {
				t.Fatalf("trial %d: estimate %v is %g from its exact value, over 11u·S = %g (x %v, w %v, q %v)", trial, est, diff, 11*u*float64(s), x, w, *q)
			}
			ref := filterScore(q, &x, &w)
			exactScore := exactSum(q, &x, &w, func(q, x *big.Float) *big.Float {
				t := new(big.Float).SetPrec(512).Sub(q, x)
				return t.Mul(t, t)
			})
			es, _ := exactScore.Float64()
			if math.Abs(float64(ref)-es) > 7.1*u*es+0x1p-140 {
				t.Fatalf("trial %d: score %v is %g from its exact value %g (x %v, w %v, q %v)", trial, ref, float64(ref)-es, es, x, w, *q)
			}
		}
		ea, eb := filterEstimate(&a, &x, &w), filterEstimate(&b, &x, &w)
		ra, rb := filterScore(&a, &x, &w), filterScore(&b, &x, &w)
		if ra <= rb && !(ea <= float32(eb+margin)) || rb <= ra && !(eb <= float32(ea+margin)) {
			t.Fatalf("trial %d: scores %v, %v but estimates %v, %v beyond the margin %v", trial, ra, rb, ea, eb, margin)
		}
		checked++
	}
	if checked < trials/2 {
		t.Errorf("only %d of %d trials in the filter's range", checked, trials)
	}
}
