package legacy

import (
	"fmt"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// interleaved returns the kernel of an interleaved type t that quantizes each
// group of t.Interleave() rows as t.Base() with quantizeGroup, then packs them
// with formats.Interleave, as the reference's quantize_*_r4/_r8 do.
func interleaved(t formats.Type, quantizeGroup func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		rows := t.Interleave()
		baseRow, err := t.Base().RowSize(int64(ne0))
		if err != nil {
			return err
		}
		groupRow, err := t.RowSize(int64(ne0))
		if err != nil {
			return err
		}
		tmp := make([]byte, rows*int(baseRow))
		gb := rows * int(groupRow)
		for g := 0; g < nrows/rows; g++ {
			if err := quantizeGroup(tmp, src[g*rows*ne0:(g+1)*rows*ne0], rows, ne0, imatrix); err != nil {
				return err
			}
			if err := formats.Interleave(t, ne0, dst[g*gb:(g+1)*gb], tmp); err != nil {
				return fmt.Errorf("legacy: %w", err)
			}
		}
		return nil
	}
}

// perRowWeighted calls quantizeRows one row at a time with that row's
// QHelper weights (blocks of 32), as quantize_q4_0_r8 and quantize_q6_0_r4 do.
func perRowWeighted(quantizeRows kernel.Func) kernel.Func {
	return func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
		if imatrix == nil {
			return quantizeRows(dst, src, nrows, ne0, nil)
		}
		rowBytes := len(dst) / nrows
		weights := make([]float32, ne0)
		for r := 0; r < nrows; r++ {
			x := src[r*ne0 : (r+1)*ne0]
			w := kernel.GuardWeights(weights, imatrix, x, qk, true)
			if err := quantizeRows(dst[r*rowBytes:(r+1)*rowBytes], x, 1, ne0, w); err != nil {
				return err
			}
		}
		return nil
	}
}
