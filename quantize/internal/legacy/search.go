package legacy

import "github.com/gquant/gquant/quantize/internal/kernel"

// makeQxQuantsWeighted is the reference's make_qx_quants with importance
// weights qw and rmse type 1, as quantize_row_q4_0/q5_0/q6_0_impl call it.
// The reference compiles make_qx_quants once (one out-of-line clone shared by
// every caller), so these types use the same search as q3_K and q6_K.
func makeQxQuantsWeighted(search kernel.Search, nmax int, x []float32, L []int8, qw []float32) float32 {
	return search.MakeQxQuants(nmax, x, L, 1, qw)
}
