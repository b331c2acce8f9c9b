package trellis

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
)

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkKernels times each kernel on the shape of
// ../../../shared/bench/reference-quantize-speed.tsv (64 rows of 4096
// normal weights, sigma 0.02, with an importance matrix) and reports, next
// to the wall-clock MB/s, "cpuMB/s": bf16 input megabytes per second of the
// thread's CPU time, the figure to compare on a loaded machine.
func BenchmarkKernels(b *testing.B) { benchmarkKernels(b, 64) }

// BenchmarkKernelsPortable is BenchmarkKernels (on 8 rows) without the
// assembly searches, as on a CPU without AVX2.
func BenchmarkKernelsPortable(b *testing.B) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	benchmarkKernels(b, 8)
}

func benchmarkKernels(b *testing.B, rows int) {
	const cols = 4096
	r := rand.New(rand.NewPCG(42, 4096))
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(0.02 * r.NormFloat64())
	}
	imatrix := make([]float32, cols)
	for i := range imatrix {
		imatrix[i] = float32(r.ExpFloat64())
	}
	kernels := Kernels()
	for _, t := range []formats.Type{formats.IQ1_KT, formats.IQ2_KT, formats.IQ3_KT, formats.IQ4_KT} {
		b.Run(t.String(), func(b *testing.B) {
			rs, err := t.RowSize(cols)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, int(rs)*rows)
			k := kernels[t]
			if err := k(dst, src, 1, cols, imatrix); err != nil { // builds the codebook
				b.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(int64(rows * cols * 2))
			b.ResetTimer()
			c0 := threadCPU()
			for i := 0; i < b.N; i++ {
				if err := k(dst, src, rows, cols, imatrix); err != nil {
					b.Fatal(err)
				}
			}
			cpu := threadCPU() - c0
			b.ReportMetric(float64(b.N*rows*cols*2)/1e6/cpu.Seconds(), "cpuMB/s")
		})
	}
}
