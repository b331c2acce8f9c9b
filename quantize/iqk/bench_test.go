package iqk

import (
	"math/rand"
	"runtime"
	"testing"

	"github.com/gquant/gquant/formats"
)

// BenchmarkKernels measures each kernel on the shape of
// ../shared/bench/reference-quantize-speed.tsv: one call over 64 rows x 4096
// normal weights (sigma 0.02) with an importance matrix, MB/s of bf16 input.
// Besides the wall-clock MB/s it reports cpu-MB/s, the rate per second of
// CPU time of the benchmark's thread, which is what compares with the
// reference's single-thread figures when the machine is shared.
func BenchmarkKernels(b *testing.B) {
	const rows, cols = 64, 4096
	rng := rand.New(rand.NewSource(1))
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 0.02)
	}
	imatrix := make([]float32, cols)
	for i := range imatrix {
		imatrix[i] = float32(rng.ExpFloat64())
	}
	set := Kernels()
	for _, typ := range formats.Types() {
		f := set[typ]
		if f == nil {
			continue
		}
		b.Run(typ.String(), func(b *testing.B) {
			rs, _ := typ.RowSize(cols)
			dst := make([]byte, int(rs)*rows)
			b.SetBytes(rows * cols * 2)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start, ok := threadCPUTime()
			for i := 0; i < b.N; i++ {
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
