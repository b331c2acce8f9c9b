package ternary

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
// normal weights, sigma 0.02) and reports, next to the wall-clock MB/s,
// "cpuMB/s": bf16 input megabytes per second of the thread's CPU time, the
// figure to compare on a loaded machine.
func BenchmarkKernels(b *testing.B) { benchmarkKernels(b) }

// BenchmarkKernelsPortable is BenchmarkKernels without the assembly loops,
// as on a CPU without AVX2.
func BenchmarkKernelsPortable(b *testing.B) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	benchmarkKernels(b)
}

func benchmarkKernels(b *testing.B) {
	const rows, cols = 64, 4096
	r := rand.New(rand.NewPCG(42, 4096))
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(0.02 * r.NormFloat64())
	}
	kernels := Kernels()
	for _, t := range []formats.Type{formats.IQ1_BN, formats.IQ2_BN, formats.IQ2_BN_R4} {
		b.Run(t.String(), func(b *testing.B) {
			rs, err := t.RowSize(cols)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, int(rs)*rows)
			k := kernels[t]
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(rows * cols * 2)
			b.ResetTimer()
			c0 := threadCPU()
			for i := 0; i < b.N; i++ {
				if err := k(dst, src, rows, cols, nil); err != nil {
					b.Fatal(err)
				}
			}
			cpu := threadCPU() - c0
			b.ReportMetric(float64(b.N)*rows*cols*2/1e6/cpu.Seconds(), "cpuMB/s")
		})
	}
}
