package kquant

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkKernels times each kernel of the package directly on the shape of
// ../../shared/bench/reference-quantize-speed.tsv: 64 rows of 4096 normal
// weights (sigma 0.02) with an importance matrix, counting 2 bytes (bf16) per
// weight. Besides wall-clock MB/s it reports cpu-MB/s, against the CPU time of
// the benchmark's thread, which stays meaningful on a loaded machine.
func BenchmarkKernels(b *testing.B) {
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
	for t, f := range Kernels() {
		rs, err := t.RowSize(cols)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(t.String(), func(b *testing.B) {
			dst := make([]byte, int(rs)*rows)
			b.SetBytes(rows * cols * 2)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start, ok := threadCPUTime()
			for b.Loop() {
				if err := f(dst, src, rows, cols, imatrix); err != nil {
					b.Fatal(err)
				}
			}
			if end, ok2 := threadCPUTime(); ok && ok2 && end > start {
				b.ReportMetric(float64(b.N)*rows*cols*2/1e6/(end-start).Seconds(), "cpu-MB/s")
			}
		})
	}
}
