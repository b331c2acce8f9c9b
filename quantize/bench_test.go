package quantize_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

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
		rs, err := t.RowSize(cols)
		if err != nil {
			continue
		}
		n := rows - rows%t.Interleave()
		if n == 0 {
			continue
		}
		b.Run(t.String(), func(b *testing.B) {
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
}
