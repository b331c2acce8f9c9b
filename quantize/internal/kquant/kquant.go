// Package kquant quantizes the K-quants (q2_K .. q6_K) and their _r4 forms.
//
// Each type has a plain path (no importance matrix: the reference's
// quantize_row_q*_K_ref) and an imatrix path (quantize_row_q*_K_impl), both
// ported from ik_llama.cpp's ggml-quants.c with the same arithmetic (see the
// notes in quantize/internal/kernel/search.go). The _r4 types quantize each row on its
// own as the base type, with the reference's per-block guard on the
// importance weights, then interleave four rows (iqk_quantize.cpp).
package kquant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// qk is the super-block size of every K-quant (QK_K).
const qk = 256

// Kernels returns the kernels this package implements.
func Kernels(o kernel.Options) kernel.Set {
	search := o.Search()
	return kernel.Set{
		formats.Q2_K:    q2KKernel(search),
		formats.Q3_K:    rowKernel(formats.Q3_K, search, quantizeRowQ3K),
		formats.Q4_K:    rowKernel(formats.Q4_K, search, quantizeRowQ4K),
		formats.Q5_K:    rowKernel(formats.Q5_K, search, quantizeRowQ5K),
		formats.Q6_K:    rowKernel(formats.Q6_K, search, quantizeRowQ6K),
		formats.Q2_K_R4: interleavedKernel(formats.Q2_K_R4, search, 16, quantizeRowQ2KAlone),
		formats.Q3_K_R4: interleavedKernel(formats.Q3_K_R4, search, 16, quantizeRowQ3K),
		formats.Q4_K_R4: interleavedKernel(formats.Q4_K_R4, search, 32, quantizeRowQ4K),
		formats.Q5_K_R4: interleavedKernel(formats.Q5_K_R4, search, 32, quantizeRowQ5K),
		formats.Q6_K_R4: interleavedKernel(formats.Q6_K_R4, search, 16, quantizeRowQ6K),
	}
}

// rowQuantizer quantizes one row x (a multiple of 256 values) into dst, with
// importance weights qw (nil for the plain path). s is per-call scratch.
type rowQuantizer func(dst []byte, x, qw []float32, s *scratch)

// scratch holds the per-block work arrays, allocated once per kernel call.
type scratch struct {
	search  kernel.Search
	L       [qk]uint8
	Li      [qk]int8
	laux    [32]uint8
	weights [32]float32
	scales  [16]float32
	mins    [16]float32
	sw      [16]float32
	Ls      [16]uint8
	Lm      [16]uint8
	Lsi     [16]int8
	rowW    []float32 // row weights of the _r4 importance guard
}

func checkRow(t formats.Type, ne0 int) error {
	if ne0%qk != 0 {
		return fmt.Errorf("kquant: %s needs rows that are a multiple of %d weights, got %d", t, qk, ne0)
	}
	return nil
}

// rowKernel quantizes row by row, as the reference's quantize_q*_K do for
// every type but q2_K without an imatrix (the plain path works on the whole
// chunk as one long row, which is the same as row by row there).
func rowKernel(t formats.Type, search kernel.Search, q rowQuantizer) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		if err := checkRow(t, ne0); err != nil {
			return err
		}
		rs := len(dst) / max(nrows, 1)
		s := &scratch{search: search}
		for r := 0; r < nrows; r++ {
			q(dst[r*rs:(r+1)*rs], src[r*ne0:(r+1)*ne0], imatrix, s)
		}
		return nil
	}
}

// interleavedKernel is the reference's quantize_repack: each group of four
// rows is quantized one row per call of the base quantizer, with the importance
// weights of near-empty blocks replaced (importanceGuard), then interleaved.
func interleavedKernel(t formats.Type, search kernel.Search, guardBlock int, q rowQuantizer) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		if err := checkRow(t, ne0); err != nil {
			return err
		}
		base := t.Base()
		brs, err := base.RowSize(int64(ne0))
		if err != nil {
			return err
		}
		n := t.Interleave()
		rs := int(brs)
		tmp := make([]byte, n*rs)
		s := &scratch{search: search}
		if imatrix != nil {
			s.rowW = make([]float32, ne0)
		}
		for r := 0; r < nrows; r += n {
			for k := 0; k < n; k++ {
				x := src[(r+k)*ne0 : (r+k+1)*ne0]
				var qw []float32
				if imatrix != nil {
					qw = kernel.GuardWeights(s.rowW, imatrix, x, guardBlock, false)
				}
				q(tmp[k*rs:(k+1)*rs], x, qw, s)
			}
			if err := formats.Interleave(t, ne0, dst[r*rs:(r+n)*rs], tmp); err != nil {
				return fmt.Errorf("kquant: %w", err)
			}
		}
		return nil
	}
}

func putF16(b []byte, v float32) {
	binary.LittleEndian.PutUint16(b, formats.FP32ToFP16(v))
}

func getF16(b []byte) float32 {
	return formats.FP16ToFP32(binary.LittleEndian.Uint16(b))
}

// sumSquares is Σx² in source order. GCC vectorizes these loops for the
// reference's target, which makes them in-order sums of rounded squares
// (no fused multiply-add).
func sumSquares(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += float32(v * v)
	}
	return s
}

// pack2 stores 256 two-bit values as q2_K/q3_K do: byte l of each 32-byte
// group holds values l, l+32, l+64, l+96 of a 128-value half.
func pack2(qs []byte, L *[qk]uint8) {
	// Eight bytes to a word: the quants are 0..3, so the shifts stay
	// within each byte.
	for j := 0; j < qk; j += 128 {
		for l := 0; l < 32; l += 8 {
			w := binary.LittleEndian.Uint64(L[j+l:]) | binary.LittleEndian.Uint64(L[j+l+32:])<<2 |
				binary.LittleEndian.Uint64(L[j+l+64:])<<4 | binary.LittleEndian.Uint64(L[j+l+96:])<<6
			binary.LittleEndian.PutUint64(qs[j/4+l:], w)
		}
	}
}

// packScaleMin6 stores eight 6-bit scales and mins in the 12-byte layout of
// q4_K/q5_K (get_scale_min_k4 reads it back).
func packScaleMin6(scales []byte, j int, ls, lm uint8) {
	if j < 4 {
		scales[j] = ls
		scales[j+4] = lm
	} else {
		scales[j+4] = ls&0xF | (lm&0xF)<<4
		scales[j-4] |= (ls >> 4) << 6
		scales[j] |= (lm >> 4) << 6
	}
}

// scaleMin6 is the reference's get_scale_min_k4.
func scaleMin6(j int, q []byte) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xF | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// roundShifted stores clamp(nearest_int((v+mm*lm)*id), 0, hi) for each v of
// x in L, as quantize_row_q2_K_impl computes it with m = mm*lm: GCC fuses
// that product into the addition (v + m is fma(mm, lm, v)), and the product
// with id into nearest_int's addition, so it is rounded as
// kernel.NearestIntMul rounds it. When every product is known to be below
// 2^22 in magnitude (the usual case) the rounding is done inline, without
// NearestIntMul's range check per value. With AVX2 (len(x) a multiple of 8)
// it is eight values per step in assembly, which leaves a block with a
// product of 2^22 or more, or NaN, to the Go loop.
func roundShifted(L []uint8, x []float32, mm, lm, id float32, hi int) {
	L = L[:len(x)]
	if useAVX2 && len(x)%8 == 0 && len(x) > 0 && roundShiftedAVX2(&x[0], len(x), mm, lm, id, int32(hi), &L[0]) {
		return
	}
	roundShiftedPortable(L, x, mm, lm, id, hi)
}

func roundShiftedPortable(L []uint8, x []float32, mm, lm, id float32, hi int) {
	L = L[:len(x)]
	var maxAbs float32
	for _, v := range x {
		if a := kernel.Abs32(kernel.FMA32(mm, lm, v)); a > maxAbs {
			maxAbs = a
		}
	}
	if float64(maxAbs)*float64(kernel.Abs32(id)) < 4194304 {
		s := float64(id)
		for i, v := range x {
			// exact product, rounded to nearest even by adding 1.5*2^52
			l := int(int64(math.Float64bits(float64(kernel.FMA32(mm, lm, v))*s+0x1.8p52)) - 0x4338000000000000)
			L[i] = uint8(clamp(l, 0, hi))
		}
		return
	}
	for i, v := range x {
		L[i] = uint8(clamp(kernel.NearestIntMul(kernel.FMA32(mm, lm, v), id), 0, hi))
	}
}
