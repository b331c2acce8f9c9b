package fit

import (
	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/pipeline"
)

// importance is the importance data the real quantize run gives tensor t
// quantized as typ (pipeline.TensorImportance): ne0 means per matrix, or
// nil, and each matrix's call count where the file has one per matrix (a
// GGUF imatrix), else nil: the measurement weights experts by it.
func importance(m *imatrix.Matrix, t gguf.TensorInfo, typ formats.Type) (data []float32, weights []float64, err error) {
	imp, err := pipeline.TensorImportance(m, t, typ)
	return imp.Data, imp.Counts, err
}
