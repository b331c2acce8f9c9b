// Package benchcpu measures benchmarks against the CPU time of their own
// OS thread, which a loaded machine (other jobs on the same cores) disturbs
// far less than wall time: the benchmarks report cpu-MB/s besides MB/s.
package benchcpu

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// Loop runs f in b's loop on a locked OS thread, after one untimed call
// (which builds any tables), with bytes per call for MB/s, and reports
// cpu-MB/s where the thread's CPU time is known.
func Loop(b *testing.B, bytes int, f func() error) {
	if err := f(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(bytes))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := Thread()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	if end, ok2 := Thread(); ok && ok2 && end > start {
		b.ReportMetric(float64(b.N)*float64(bytes)/1e6/(end-start).Seconds(), "cpu-MB/s")
	}
}

// Rows and Cols are the shape of ../shared/bench's measurements: one call
// over 64 rows of 4096 weights.
const Rows, Cols = 64, 4096

// Weights returns the inputs the kernel benchmarks share: rows x cols
// normal weights (sigma 0.02) and an exponential importance vector of cols
// values, from a fixed seed, so every benchmark times the same data as the
// reference's table did.
func Weights(rows, cols int) (src, imatrix []float32) {
	r := rand.New(rand.NewPCG(42, 4096))
	src = make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(0.02 * r.NormFloat64())
	}
	imatrix = make([]float32, cols)
	for i := range imatrix {
		imatrix[i] = float32(r.ExpFloat64())
	}
	return src, imatrix
}
