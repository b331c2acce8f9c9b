package trellis

import (
	"math"

	"github.com/gquant/gquant/quantize/internal/kernel"

	"github.com/gquant/gquant/internal/tables"
)

const (
	superBlock = 256 // weights per super-block
	blockSize  = 32  // weights per block (one scale)
)

// fmaFast is kernel.FMA32 for hot loops that can redo their work: the
// product of two float32 is exact in float64, so r is a*b+c rounded once,
// and rounding it to float32 is right unless r sits halfway between two
// float32 values (low 29 mantissa bits 1<<28). It reports that case as
// tie = 1; a caller that sees one redoes its sums with kernel.FMA32.
func fmaFast(a, b, c float32) (sum float32, tie uint32) {
	r := float64(a)*float64(b) + float64(c)
	if math.Float64bits(r)<<35 == 1<<63 {
		tie = 1
	}
	return float32(r), tie
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// truncInt32 converts like the reference's (int)x on x86: toward zero, and
// the "integer indefinite" value for NaN and out-of-range inputs.
func truncInt32(x float32) int {
	if !(x > -2147483648.0 && x < 2147483648.0) {
		return math.MinInt32
	}
	return int(int32(x))
}

// bestIndexIQ4NL returns the index of the value of tables.KTScaleValues
// nearest to x (the reference's best_index_iq4nl). KTScaleValues are
// iq4_nl's values, so tables.IQ4NLIndex is their lookup table.
func bestIndexIQ4NL(x float32) int {
	values := &tables.KTScaleValues
	ix := truncInt32(x) - int(values[0])
	if ix < 0 || ix >= 241 {
		if ix < 0 {
			return 0
		}
		return 15
	}
	ix = int(tables.IQ4NLIndex[ix])
	if ix < 16 {
		return ix
	}
	if x-float32(values[ix-16]) < float32(values[ix-15])-x {
		return ix - 16
	}
	return ix - 15
}

// setWeights computes the per-weight importance of one row: with an
// importance matrix, the matrix times the weight's magnitude against the
// super-block's spread; without one, that spread plus the weight squared.
// Super-blocks (and, with an imatrix, blocks) that are (almost) zero get a
// small constant weight.
//
// roundSq picks how the importance-weighted blocks form x*x, which only
// float32 inputs with full mantissas can see (with bf16 or f16 values x*x
// is exact). The reference (the golden build: position-independent code,
// ggml a shared library) inlines set_weights into the function that calls
// it, and GCC contracts the block loop differently there. In
// quantize_iq1_kt, quantize_iq2_kt and quantize_iq4_kt (which inline their
// row functions too; roundSq true) it rounds x*x once (vmulss) and uses
// that product twice, in sqrt(sigma2 + x*x) and in the block's sum of
// squares, both plain adds (vaddss). In quantize_row_iq3_kt_impl (roundSq
// false) it fuses both: sqrt(fma(x, x, sigma2)) and sumx2 = fma(x, x,
// sumx2). sumwx and sumw2 are fused in both, the super-block's sum of
// squares in neither, and the weights without an imatrix are
// fma(x, x, sigma2/4) in both.
func setWeights(sigma2Scale float32, x, imatrix, w []float32, roundSq bool) {
	const eps2, constWeight = float32(1e-14), float32(1e-4)
	for ibl := 0; ibl < len(x)/superBlock; ibl++ {
		xbl := x[ibl*superBlock : (ibl+1)*superBlock]
		wbl := w[ibl*superBlock : (ibl+1)*superBlock]
		// The reference computes the products x*x as vectors (vmulps,
		// rounded) and adds them in index order (vaddss): this sum is not
		// fused in any of the four types.
		var sumx2 float32
		if useAVX2 {
			sumx2 = sumSquaresAVX2(&xbl[0], len(xbl))
		} else {
			for _, v := range xbl {
				sumx2 += float32(v * v)
			}
		}
		if sumx2 < eps2*superBlock {
			for j := range wbl {
				wbl[j] = constWeight
			}
			continue
		}
		sigma2 := float32(sigma2Scale*sumx2) / superBlock
		if imatrix == nil {
			quarter := float32(0.25 * sigma2)
			for j, v := range xbl {
				wbl[j] = kernel.FMA32(v, v, quarter)
			}
			continue
		}
		qbl := imatrix[ibl*superBlock : (ibl+1)*superBlock]
		for ib := 0; ib < superBlock/blockSize; ib++ {
			xb := xbl[ib*blockSize : (ib+1)*blockSize]
			wb := wbl[ib*blockSize : (ib+1)*blockSize]
			qw := qbl[ib*blockSize : (ib+1)*blockSize]
			var sumwx, sumw2, sumx2 float32
			switch {
			case useAVX2 && roundSq:
				sumwx, sumw2, sumx2 = weightsBlockRoundedAVX2(&xb[0], &qw[0], &wb[0], sigma2)
			case useAVX2:
				sumwx, sumw2, sumx2 = weightsBlockAVX2(&xb[0], &qw[0], &wb[0], sigma2)
			case roundSq:
				for j, v := range xb {
					x2 := float32(v * v)
					wb[j] = float32(qw[j] * sqrt32(sigma2+x2))
					sumwx = kernel.FMA32(wb[j], abs32(v), sumwx)
					sumw2 = kernel.FMA32(wb[j], wb[j], sumw2)
					sumx2 += x2
				}
			default:
				for j, v := range xb {
					wb[j] = float32(qw[j] * sqrt32(kernel.FMA32(v, v, sigma2)))
					sumwx = kernel.FMA32(wb[j], abs32(v), sumwx)
					sumw2 = kernel.FMA32(wb[j], wb[j], sumw2)
					sumx2 = kernel.FMA32(v, v, sumx2)
				}
			}
			if sumx2 < eps2 || sumw2 < eps2 || sumwx < eps2 {
				for j := range wb {
					wb[j] = constWeight
				}
			}
		}
	}
}

// sqrt32 is a correctly rounded float32 square root (rounding the float64
// root again cannot go wrong: 53 >= 2*24+2).
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// rowAbsMax is the largest magnitude in x.
func rowAbsMax(x []float32) float32 {
	var m float32
	for _, v := range x {
		if a := abs32(v); a > m {
			m = a
		}
	}
	return m
}

// maxF mirrors std::max(a, b): b only when a < b.
func maxF(a, b float32) float32 {
	if a < b {
		return b
	}
	return a
}
