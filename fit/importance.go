package fit

import (
	"fmt"
	"strings"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/quantize"

	"github.com/gquant/gquant/formats"
)

// importance is the importance data the real quantize run gives tensor t
// quantized as typ: ne0 means per matrix, or nil. It is pipeline's own
// handling (its unexported importance function) written again, because
// pipeline only exposes it through a whole plan: the reference's name
// fallbacks, attn_kv_b data repeated for every head of an MLA attn_v_b, and
// uniform importance for the all-zero slices of the types that fail on them.
// TestImportanceMatchesPipeline checks the two agree.
//
// weights holds each matrix's call count where the file has one per matrix
// (a GGUF imatrix), else nil: the measurement weights experts by it.
func importance(m *imatrix.Matrix, t gguf.TensorInfo, typ formats.Type) (data []float32, weights []float64, err error) {
	if m == nil || len(m.Entries) == 0 {
		return nil, nil, nil
	}
	e, from, ok := m.Find(t.Name)
	if !ok {
		return nil, nil, nil
	}
	ne0, _, mats := dims(t.Shape)
	ne2 := int64(1)
	if len(t.Shape) > 2 {
		ne2 = t.Shape[2]
	}
	mean := e.Mean()
	switch {
	case int64(len(mean)) == ne0*ne2 && ne2 == mats:
		data = mean
		if int64(len(e.Counts)) == mats && mats > 1 {
			weights = append([]float64(nil), e.Counts...)
		}
	case int64(len(mean)) == ne0 && mats > 1 && from != t.Name && strings.HasSuffix(t.Name, ".attn_v_b.weight"):
		data = make([]float32, 0, ne0*mats)
		for h := int64(0); h < mats; h++ {
			data = append(data, mean...)
		}
	default:
		if t.Name == "token_embd.weight" {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("tensor %s: importance matrix entry %s has %d values, the tensor needs %d (%d x %d)",
			t.Name, from, len(mean), ne0*mats, ne0, mats)
	}
	if quantize.FailsOnZeroImportance(typ) {
		for s := int64(0); s < mats; s++ {
			slice := data[s*ne0 : (s+1)*ne0]
			if allZero(slice) {
				for j := range slice {
					slice[j] = 1
				}
			}
		}
	}
	return data, weights, nil
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// dims returns a shape's row length, rows per matrix and matrices.
func dims(shape []int64) (ne0, rows, mats int64) {
	ne0, rows, mats = 1, 1, 1
	if len(shape) > 0 {
		ne0 = shape[0]
	}
	if len(shape) > 1 {
		rows = shape[1]
	}
	for _, d := range shape[min(2, len(shape)):] {
		mats *= d
	}
	return
}
