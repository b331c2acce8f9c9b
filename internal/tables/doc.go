// Package tables holds the codebooks of the quantized types that the
// dequantizers (package formats) and the quantizers (quantize/internal/...)
// share: the IQ code-point grids and their seeds (iq_tables.go, ported from
// the reference; iq_grids.go, generated from them by go generate), the
// non-linear level grids of the IQK types, the mxfp4 values and the trellis
// block scales. The tables are Go arrays, so writable; being internal, only
// this module's packages see them, and none writes them.
package tables
