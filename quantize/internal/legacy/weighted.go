package legacy

import (
	"encoding/binary"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// The reference's quantize_row_q*_impl: with an importance matrix each block
// gets a weighted scale search. Weights are imatrix[j]*sqrt(sigma2 + x[j]²)
// with sigma2 the row's mean square (x[j]² + sigma2 fused, as GCC compiles
// it).

// rowSigma2 is the mean square of the row. GCC vectorizes the reference's
// sum_x2 loop (quantize_q4_0 .. quantize_q6_0 after inlining: vmulps, then
// the sixteen lanes added one by one in index order), so it is the in-order
// sum of rounded squares, not a chain of fused multiply-adds; rows are
// multiples of 32 long, so the scalar (fused) tail of that loop never runs.
// The difference is one ulp of sigma2 now and then, which decides a close
// scale search through the weights (sparse rows, where few squares add up).
func rowSigma2(x []float32) float32 {
	var sum float32
	for _, v := range x {
		sum += float32(v * v)
	}
	return sum / float32(len(x))
}

// blockWeights fills w with qw[j]*sqrtf(sigma2 + x[j]²).
func blockWeights(w, qw, x []float32, sigma2 float32) {
	kernel.ImatrixWeights(w, x[:len(w)], qw, sigma2, useAVX2)
}

// quantizeRowsWith runs quantizeRow over each row of src, or quantizeRef over
// the whole chunk when there is no importance matrix.
func quantizeRowsWith(search kernel.Search, dst []byte, src []float32, nrows, ne0 int, imatrix []float32,
	quantizeRef func(dst []byte, x []float32), quantizeRow func(search kernel.Search, dst []byte, x, imatrix []float32)) {
	if imatrix == nil {
		quantizeRef(dst, src)
		return
	}
	rowBytes := len(dst) / nrows
	for r := 0; r < nrows; r++ {
		quantizeRow(search, dst[r*rowBytes:(r+1)*rowBytes], src[r*ne0:(r+1)*ne0], imatrix)
	}
}

// weighted is the kernel of a type whose rows take a weighted scale search
// per block with an importance matrix (quantizeRow) and the reference's
// plain quantizer without one (quantizeRef).
func weighted(search kernel.Search, quantizeRef func(dst []byte, x []float32), quantizeRow func(search kernel.Search, dst []byte, x, imatrix []float32)) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		quantizeRowsWith(search, dst, src, nrows, ne0, imatrix, quantizeRef, quantizeRow)
		return nil
	}
}

// quantizeQ4_0 is the q4_0 kernel o asks for: the symmetric one of
// --symmetric-q40, or the reference's default.
func quantizeQ4_0(o kernel.Options) kernel.Func {
	if o.SymmetricQ40 {
		return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
			quantizeQ4_0Symmetric(dst, src)
			return nil
		}
	}
	return quantizeQ4_0Asymmetric(o.Search())
}

// quantizeQ4_0Plain is what the reference's ARM repacks of q4_0 store
// (quantize_q4_0_nr_bl): quantize_row_q4_0_ref's rows, whatever the
// options. They take no importance weights: the reference stops on them,
// and quantize.QuantizeRows refuses them for these types before a kernel
// runs (formats.TypeInfo.ImatrixFails), so the kernel never sees any.
func quantizeQ4_0Plain(dst []byte, src []float32, _, _ int, _ []float32) error {
	quantizeQ4_0Ref(dst, src)
	return nil
}

// quantizeQ4_0Asymmetric is q4_0 without the --symmetric-q40 option, which
// the reference's q4_0_r8 always uses.
func quantizeQ4_0Asymmetric(search kernel.Search) kernel.Func {
	return weighted(search, quantizeQ4_0Ref, quantizeQ4_0Row)
}

func quantizeQ4_1(search kernel.Search) kernel.Func {
	return weighted(search, quantizeQ4_1Ref, quantizeQ4_1Row)
}

func quantizeQ5_0(search kernel.Search) kernel.Func {
	return weighted(search, quantizeQ5_0Ref, quantizeQ5_0Row)
}

func quantizeQ5_1(search kernel.Search) kernel.Func {
	return weighted(search, quantizeQ5_1Ref, quantizeQ5_1Row)
}

// quantizeQ6_0 always searches: without an importance matrix the weights are x².
func quantizeQ6_0(search kernel.Search) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		rowBytes := len(dst) / nrows
		for r := 0; r < nrows; r++ {
			quantizeQ6_0Row(search, dst[r*rowBytes:(r+1)*rowBytes], src[r*ne0:(r+1)*ne0], imatrix)
		}
		return nil
	}
}

func quantizeQ4_0Row(search kernel.Search, dst []byte, x, imatrix []float32) {
	var weight [qk]float32
	var L [qk]int8
	sigma2 := rowSigma2(x)
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : (ib+1)*qk]
		y := dst[ib*blockQ4_0 : (ib+1)*blockQ4_0]
		blockWeights(weight[:], imatrix[ib*qk:], xb, sigma2)
		d := makeQxQuantsWeighted(search, 8, xb, L[:], weight[:])
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		for j := 0; j < 16; j++ {
			y[2+j] = byte(L[j]) | byte(L[j+16])<<4
		}
	}
}

func quantizeQ5_0Row(search kernel.Search, dst []byte, x, imatrix []float32) {
	var weight [qk]float32
	var L [qk]int8
	sigma2 := rowSigma2(x)
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : (ib+1)*qk]
		y := dst[ib*blockQ5_0 : (ib+1)*blockQ5_0]
		blockWeights(weight[:], imatrix[ib*qk:], xb, sigma2)
		d := makeQxQuantsWeighted(search, 16, xb, L[:], weight[:])
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		var qh uint32
		for j := 0; j < 16; j++ {
			xi0, xi1 := byte(L[j]), byte(L[j+16])
			y[6+j] = xi0&0x0f | (xi1&0x0f)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + 16)
		}
		binary.LittleEndian.PutUint32(y[2:], qh)
	}
}

func quantizeQ4_1Row(search kernel.Search, dst []byte, x, imatrix []float32) {
	var weight [qk]float32
	var L, laux [qk]uint8
	sigma2 := rowSigma2(x)
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : (ib+1)*qk]
		y := dst[ib*blockQ4_1 : (ib+1)*blockQ4_1]
		blockWeights(weight[:], imatrix[ib*qk:], xb, sigma2)
		d, theMin := search.MakeQkx3Quants(15, xb, weight[:], L[:], laux[:], -0.9, 0.05, 36, false, kernel.RoundedProducts)
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		binary.LittleEndian.PutUint16(y[2:], formats.FP32ToFP16(-theMin))
		for j := 0; j < 16; j++ {
			y[4+j] = L[j] | L[j+16]<<4
		}
	}
}

func quantizeQ5_1Row(search kernel.Search, dst []byte, x, imatrix []float32) {
	var weight [qk]float32
	var L, laux [qk]uint8
	sigma2 := rowSigma2(x)
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : (ib+1)*qk]
		y := dst[ib*blockQ5_1 : (ib+1)*blockQ5_1]
		blockWeights(weight[:], imatrix[ib*qk:], xb, sigma2)
		d, theMin := search.MakeQkx3Quants(31, xb, weight[:], L[:], laux[:], -0.9, 0.05, 36, false, kernel.RoundedProducts)
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		binary.LittleEndian.PutUint16(y[2:], formats.FP32ToFP16(-theMin))
		var qh uint32
		for j := 0; j < 16; j++ {
			xi0, xi1 := L[j], L[j+16]
			y[8+j] = xi0&0x0f | (xi1&0x0f)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + 16)
		}
		binary.LittleEndian.PutUint32(y[4:], qh)
	}
}

// quantizeQ6_0Row is quantize_row_q6_0_impl: make_qx_quants with nmax 32;
// the two high bits of each 6-bit quant go to qh[j%8] at bit 4*(j/8)
// (low half) and 4*(j/8)+2 (high half).
func quantizeQ6_0Row(search kernel.Search, dst []byte, x, imatrix []float32) {
	var weight [qk]float32
	var L [qk]int8
	var sigma2 float32
	if imatrix != nil {
		sigma2 = rowSigma2(x)
	}
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : (ib+1)*qk]
		y := dst[ib*blockQ6_0 : (ib+1)*blockQ6_0]
		if imatrix != nil {
			blockWeights(weight[:], imatrix[ib*qk:], xb, sigma2)
		} else {
			for j, v := range xb {
				weight[j] = v * v
			}
		}
		d := makeQxQuantsWeighted(search, 32, xb, L[:], weight[:])
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		qh := y[2:10]
		clear(qh)
		for j := 0; j < 16; j++ {
			xi0, xi1 := byte(L[j]), byte(L[j+16])
			y[10+j] = xi0&0x0f | (xi1&0x0f)<<4
			h := xi0>>4 | (xi1>>4)<<2
			qh[j%8] |= h << (4 * (j / 8))
		}
	}
}
