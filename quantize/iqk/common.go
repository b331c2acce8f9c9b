package iqk

import (
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/kernel"
)

// fma is a*b+c rounded once, where the reference build contracts into a
// fused multiply-add. The float32 product is exact in float64, so the
// float64 sum is off only by its own rounding, which can mislead the final
// rounding to float32 only when the sum lands exactly halfway between two
// float32 values; that rare case goes to kernel.FMA32.
func fma(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	if uint32(math.Float64bits(s))<<3 == 1<<31 { // low 29 bits are 1<<28
		return fmaTie(a, b, c)
	}
	return float32(s)
}

//go:noinline
func fmaTie(a, b, c float32) float32 { return kernel.FMA32(a, b, c) }

// mul forces a float32 product (no contraction with a following add).
func mul(a, b float32) float32 { return float32(a * b) }

func nearestInt(v float32) int { return kernel.NearestInt(v) }

func sqrt32(v float32) float32 { return float32(math.Sqrt(float64(v))) }

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

func fp16(v float32) uint16 { return formats.FP32ToFP16(v) }

func clamp(v, lo, hi int) int { return max(lo, min(hi, v)) }

// rowQuantizer quantizes one row (x, ne0 weights) into y; w is nil or the
// row's sanitised importance weights.
type rowQuantizer func(y []byte, x []float32, w []float32)

// quantizeRows applies q to every row, handing it importance weights that
// were sanitised per block of blockSize values: where a block's weights, its
// values or their product are all (nearly) zero, the reference replaces the
// block's weights by a tiny uniform 1e-9 so the searches still see a usable
// weighting.
func quantizeRows(dst []byte, src []float32, nrows, ne0 int, imatrix []float32, blockSize int, rowBytes int, q rowQuantizer) {
	var weights []float32
	if imatrix != nil {
		weights = make([]float32, ne0)
	}
	for r := 0; r < nrows; r++ {
		x := src[r*ne0 : (r+1)*ne0]
		if imatrix != nil {
			sanitiseWeights(weights, imatrix, x, blockSize)
		}
		q(dst[r*rowBytes:(r+1)*rowBytes], x, weights)
	}
}

const (
	kEps  float32 = 1e-9
	kEps2         = kEps * kEps
)

func sanitiseWeights(w, imatrix, x []float32, blockSize int) {
	thresh := float32(blockSize) * kEps2
	for ib := 0; ib < len(x)/blockSize; ib++ {
		wb := w[ib*blockSize : (ib+1)*blockSize]
		xb := x[ib*blockSize : (ib+1)*blockSize]
		copy(wb, imatrix[ib*blockSize:(ib+1)*blockSize])
		var sumw2, sumx2, sumwx float32
		for j := range wb {
			sumw2 = fma(wb[j], wb[j], sumw2)
			sumx2 = fma(xb[j], xb[j], sumx2)
			sumwx = fma(wb[j], abs32(xb[j]), sumwx)
		}
		if sumw2 > thresh && sumx2 > thresh && sumwx > thresh {
			continue
		}
		for j := range wb {
			wb[j] = kEps
		}
	}
}

// sumSquares is the sequential sum of x[j]^2 the reference uses for sigma2.
func sumSquares(x []float32) float32 {
	var s float32
	for _, v := range x {
		s = fma(v, v, s)
	}
	return s
}

// blockWeights fills weight for block xb: with importance weights qw,
// qw*sqrt(sigma2 + x^2); otherwise the type's fallback.
func blockWeights(weight, xb, qw []float32, sigma2 float32, fallback func(x float32) float32) {
	if qw != nil {
		for j := range xb {
			weight[j] = qw[j] * sqrt32(fma(xb[j], xb[j], sigma2))
		}
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
