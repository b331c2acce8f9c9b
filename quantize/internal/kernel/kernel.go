// Package kernel holds what the quantizer families share: the signature of a
// quantization kernel and the numeric helpers the reference's searches use.
package kernel

import "github.com/gquant/gquant/formats"

// Func quantizes nrows rows of ne0 float32 weights (src, row-major) into dst,
// exactly as one reference ggml_quantize_chunk call over the same rows does.
// dst has exactly nrows * RowSize(ne0) bytes. imatrix is nil or holds ne0
// importance weights. Callers (quantize.QuantizeRows) have already checked
// sizes, row-group multiples and finiteness; a Func returns an error only for
// conditions the reference itself refuses.
type Func func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error

// Set maps each type a family implements to its kernel.
type Set map[formats.Type]Func
