package iqk

import (
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// sum32 is p+c rounded once to float32, for p and c exact in float64 (such
// as a product of two float32 and a float32): fma's rounding, for callers
// that hold the product already.
func sum32(p, c float64) float32 {
	s := p + c
	if uint32(math.Float64bits(s))<<3 == 1<<31 {
		z := s - p
		e := (p - (s - z)) + (c - z)
		r := float32(s)
		if e*(float64(r)-s) < 0 {
			return float32(2*s - float64(r))
		}
		return r
	}
	return float32(s)
}

// mayBeat reports whether a candidate whose sums, taken in float64, are
// sumqx and sumq2 (and sum |w*q*x| absqx) might pass the reference's float32
// test sumq2 > 0 && sumqx^2 > best*sumq2. The float32 sums of up to 32 terms
// are within 32u*absqx and (relatively) 32u of these; the margins here are
// 1e-5. Near the float32 underflow or overflow ranges it answers true.
func mayBeat(sumqx, sumq2, absqx float64, best float32) bool {
	if !(sumq2 > 1e-30 && absqx > 1e-18 && absqx < 1e16) {
		return true
	}
	ub := math.Abs(sumqx) + 1e-5*absqx
	return ub*ub*(1+1e-5) >= float64(best)*sumq2*(1-1e-5)
}

// mul forces a float32 product (no contraction with a following add).
func mul(a, b float32) float32 { return float32(a * b) }

func nearestInt(v float32) int { return kernel.NearestInt(v) }

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// stdMax is C++'s std::max(a, b), (a < b) ? b : a: a NaN b is ignored (Go's
// max would return NaN). Block scales come out NaN where the searches
// overflow (values near 1e17).
func stdMax(a, b float32) float32 {
	if a < b {
		return b
	}
	return a
}

// macroMax is ggml's MAX(a, b) macro, (a > b) ? a : b: unlike std::max it
// returns a NaN b.
func macroMax(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

func fp16(v float32) uint16 { return formats.FP32ToFP16(v) }

func clamp(v, lo, hi int) int { return max(lo, min(hi, v)) }

// rowQuantizer quantizes one row (x, ne0 weights) into y; w is nil or the
// row's sanitised importance weights. It returns an error (a
// *kernel.OverflowError) where the values overflow its float32 searches,
// which stops the kernel call.
type rowQuantizer func(y []byte, x []float32, w []float32) error

// total adapts a row quantizer whose searches cannot fail.
func total(q func(y []byte, x []float32, w []float32)) rowQuantizer {
	return func(y []byte, x []float32, w []float32) error {
		q(y, x, w)
		return nil
	}
}

// quantizeRows applies q to every row, handing it importance weights that
// were sanitised per block of blockSize values: where a block's weights, its
// values or their product are all (nearly) zero, the reference replaces the
// block's weights by a tiny uniform 1e-9 so the searches still see a usable
// weighting.
func quantizeRows(dst []byte, src []float32, nrows, ne0 int, imatrix []float32, blockSize int, rowBytes int, q rowQuantizer) error {
	var weights []float32
	if imatrix != nil {
		weights = make([]float32, ne0)
	}
	for r := 0; r < nrows; r++ {
		x := src[r*ne0 : (r+1)*ne0]
		if imatrix != nil {
			weights = kernel.GuardWeights(weights, imatrix, x, blockSize, false)
		}
		if err := q(dst[r*rowBytes:(r+1)*rowBytes], x, weights); err != nil {
			return err
		}
	}
	return nil
}

// sumSquares is the sum of x[j]^2 the reference uses for sigma2. GCC
// vectorizes these loops (for AVX2 and AVX-512 alike) as in-order
// reductions of rounded vector products, so nothing is fused: confirmed on a
// reference build over 64 rows of 4096, where the fused form breaks the
// imatrix variants of iq4_ks, iq4_kss, iq5_ks and iq6_k.
func sumSquares(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += mul(v, v)
	}
	return s
}

// sigmaWeightUnfused is iq2ksWeights' fallback where the reference's 16-weight loop is
// vectorized as a basic block (iq3_k, iq5_k, iq6_k) or GCC otherwise keeps
// the square apart (iq2_k), and the product comes out rounded: sigma2/4 +
// round(x^2). (Found on a reference build over 64 rows of 4096, where the
// fused form breaks iq5_k and iq6_k without imatrix; the 16-row golden data
// does not tell the two apart. Squares of bf16 values are exact, so only
// float32 input shows it.)
func sigmaWeightUnfused(sigma2 float32) func(float32) float32 {
	quarter := 0.25 * sigma2
	return func(v float32) float32 { return mul(v, v) + quarter }
}

// blockWeights fills weight for block xb: with importance weights qw,
// qw*sqrt(sigma2 + x^2); otherwise the type's fallback.
func blockWeights(weight, xb, qw []float32, sigma2 float32, fallback func(x float32) float32) {
	if qw != nil {
		kernel.ImatrixWeights(weight, xb, qw, sigma2, useWeightsAVX2)
		return
	}
	for j := range xb {
		weight[j] = fallback(xb[j])
	}
}

// absMax returns the largest |x| and the signed value that has it (the first
// one on ties).
func absMax(x []float32) (amax, maxv float32) {
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, maxv = a, v
		}
	}
	return
}

func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

func put16(b []byte, v uint16) { b[0], b[1] = byte(v), byte(v>>8) }
