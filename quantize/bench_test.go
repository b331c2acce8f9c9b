package quantize_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
)

// BenchmarkQuantize times one QuantizeRows call per type over 64 rows of 4096
// normal weights (sigma 0.02, fixed seed) with an importance matrix, the
// setting of ../shared/bench/reference-quantize-speed.tsv. SetBytes counts
// the bf16 input (2 bytes per weight), so MB/s compares with that table.
// Besides wall-clock MB/s it reports cpu-MB/s, against the CPU time of the
// benchmark's thread, which stays meaningful on a loaded machine. One call
// before the timed loop builds the type's tables, as the reference's figures
// exclude that too. Run with -tags purego for the portable kernels.
// `go run ./internal/benchratio BENCH.txt` turns the output into ratios to
// the reference, per type.
func BenchmarkQuantize(b *testing.B) {
	const rows, cols = 64, 4096
	r := rand.New(rand.NewPCG(42, 4096))
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(0.02 * r.NormFloat64())
	}
	imatrix := make([]float32, cols)
	for i := range imatrix {
		imatrix[i] = float32(r.ExpFloat64())
	}
	for _, t := range quantize.SupportedTypes() {
		benchQuantizeType(b, t.String(), t, rows, cols, src, imatrix)
	}
	// The K-quants search differently without an importance matrix
	// (make_qkx2_quants, make_q3_quants), as llama-quantize runs them when
	// given none.
	for _, t := range []formats.Type{formats.Q2_K, formats.Q3_K, formats.Q4_K, formats.Q5_K, formats.Q6_K} {
		benchQuantizeType(b, "noimat/"+t.String(), t, rows, cols, src, nil)
	}
}

// benchQuantizeType is one sub-benchmark of BenchmarkQuantize.
func benchQuantizeType(b *testing.B, name string, t formats.Type, rows, cols int, src, imatrix []float32) {
	rs, err := t.RowSize(int64(cols))
	if err != nil {
		return
	}
	n := rows - rows%t.Interleave()
	if n == 0 {
		return
	}
	b.Run(name, func(b *testing.B) {
		dst := make([]byte, int(rs)*n)
		if err := quantize.QuantizeRowsInto(dst, t, n, cols, src[:n*cols], imatrix); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(n * cols * 2))
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		start, ok := threadCPUTime()
		for b.Loop() {
			if err := quantize.QuantizeRowsInto(dst, t, n, cols, src[:n*cols], imatrix); err != nil {
				b.Fatal(err)
			}
		}
		if end, ok2 := threadCPUTime(); ok && ok2 && end > start {
			b.ReportMetric(float64(b.N)*float64(n*cols*2)/1e6/(end-start).Seconds(), "cpu-MB/s")
		}
	})
}
