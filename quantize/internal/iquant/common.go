package iquant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Arithmetic conventions (the reference is GCC -O3 -march=native with FMA
// contraction on): a product whose only use is one addition or subtraction is
// fused (kernel.FMA32), in a*b+c*d only the first product is fused, and every
// other product is rounded on its own, spelled float32(a*b) so that the Go
// compiler cannot fuse it either. Sums run sequentially in source order.

const qkK = 256

// Direct functions (not func variables) so the compiler can inline them.

// fmaBits is the float64 sum of kernel.FMA32 and whether rounding it to
// float32 needs FMA32's tie handling: hot loops use it to stay call-free,
//
//	r, tie := fmaBits(a, b, c); v := float32(r); if tie { v = kernel.FMA32(a, b, c) }
func fmaBits(a, b, c float32) (float64, bool) {
	r := float64(a)*float64(b) + float64(c)
	return r, math.Float64bits(r)&(1<<29-1) == 1<<28
}

// fmaFast is kernel.FMA32 when the float64 sum is not on a float32 tie, and NaN
// when it is, for expressions the caller recomputes with kernel.FMA32 in that
// rare case.
func fmaFast(a, b, c float32) float32 {
	r := float64(a)*float64(b) + float64(c)
	if math.Float64bits(r)&(1<<29-1) == 1<<28 {
		return float32(math.NaN())
	}
	return float32(r)
}

// fmaTieFree is kernel.FMA32 with the TwoSum error term computed
// unconditionally, so the only branch left is taken almost never (an inexact
// float64 sum that also lands on a float32 tie). Hot loops whose operands put
// many sums exactly on float32 ties (small integers times a scale, minus a
// value) use it instead of fmaBits to avoid mispredicted branches.
func fmaTieFree(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	z := s - p
	e := (p - (s - z)) + (float64(c) - z)
	r := float32(s)
	if e*(float64(r)-s) < 0 && uint32(math.Float64bits(s))<<3 == 1<<31 {
		return float32(2*s - float64(r))
	}
	return r
}

func sqrt(v float32) float32 { return kernel.Sqrt32(v) }
func abs(v float32) float32  { return kernel.Abs32(v) }
func round(v float32) int    { return kernel.NearestInt(v) }

func putF16(b []byte, v float32) { binary.LittleEndian.PutUint16(b, formats.FP32ToFP16(v)) }

// rowQuantizer quantizes one row of ne0 weights into dst (one row of its
// type). It returns true when it wrote a substitute encoding for part of the
// row where the reference stops the process (see FallbackError), and an
// error (a *kernel.OverflowError) where the values overflow its float32
// searches, which stops the kernel call.
type rowQuantizer func(dst []byte, x []float32, imatrix []float32) (substituted bool, err error)

// total adapts a row quantizer that encodes every input the reference does.
func total(q func(dst []byte, x, imatrix []float32)) rowQuantizer {
	return func(dst []byte, x, imatrix []float32) (bool, error) {
		q(dst, x, imatrix)
		return false, nil
	}
}

// mayOverflow adapts a row quantizer that encodes every input the reference
// does, except where its searches overflow (an error).
func mayOverflow(q func(dst []byte, x, imatrix []float32) error) rowQuantizer {
	return func(dst []byte, x, imatrix []float32) (bool, error) {
		return false, q(dst, x, imatrix)
	}
}

// fallback returns nil, or the *FallbackError for rows of t that took a
// substitute encoding.
func fallback(t formats.Type, rows []int) error {
	if len(rows) == 0 {
		return nil
	}
	return &FallbackError{Type: t, Rows: rows, Reason: fallbackReasons[t.Base()]}
}

// rowsKernel runs q over every row; each row sees the whole importance matrix.
func rowsKernel(t formats.Type, q rowQuantizer) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		if ne0%t.BlockSize() != 0 {
			return fmt.Errorf("iquant: %s rows of %d weights are not whole blocks of %d", t, ne0, t.BlockSize())
		}
		rs := len(dst) / max(nrows, 1)
		var substituted []int
		for r := 0; r < nrows; r++ {
			sub, err := q(dst[r*rs:(r+1)*rs], src[r*ne0:(r+1)*ne0], imatrix)
			if err != nil {
				return err
			}
			if sub {
				substituted = append(substituted, r)
			}
		}
		return fallback(t, substituted)
	}
}

// repackKernel is the reference's quantize_repack: quantize each group of
// Interleave() rows as the base type, with the importance weights of each row
// passed through repackWeights, then interleave the group.
func repackKernel(t formats.Type, helperBlock int, q rowQuantizer) kernel.Func {
	base := t.Base()
	n := t.Interleave()
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		if ne0%base.BlockSize() != 0 {
			return fmt.Errorf("iquant: %s rows of %d weights are not whole blocks of %d", t, ne0, base.BlockSize())
		}
		brs, err := base.RowSize(int64(ne0))
		if err != nil {
			return err
		}
		tmp := make([]byte, int(brs)*n)
		var w []float32
		if imatrix != nil {
			w = make([]float32, ne0)
		}
		var substituted []int
		for r := 0; r < nrows; r += n {
			for k := 0; k < n; k++ {
				x := src[(r+k)*ne0 : (r+k+1)*ne0]
				sub, err := q(tmp[k*int(brs):(k+1)*int(brs)], x, kernel.GuardWeights(w, imatrix, x, helperBlock, true))
				if err != nil {
					return err
				}
				if sub {
					substituted = append(substituted, r+k)
				}
			}
			if err := formats.Interleave(t, ne0, dst[r*int(brs):(r+n)*int(brs)], tmp); err != nil {
				return err
			}
		}
		return fallback(t, substituted)
	}
}
