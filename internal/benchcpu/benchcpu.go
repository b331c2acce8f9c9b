// Package benchcpu measures benchmarks against the CPU time of their own
// OS thread, which a loaded machine (other jobs on the same cores) disturbs
// far less than wall time: the benchmarks report cpu-MB/s besides MB/s.
package benchcpu

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"
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

// SideBySide times runs in one benchmark loop: each iteration calls every
// run once, in turn, starting one further along each time, after one
// untimed call of each (tables, first touch). It returns each run's median
// time. Timed side by side, the ratios between runs hold within a few
// percent on a shared machine, where separate benchmarks drift with the
// load by more than the gaps being measured.
func SideBySide(b *testing.B, runs []func()) []time.Duration {
	for _, run := range runs {
		run()
	}
	spent := make([][]time.Duration, len(runs))
	n := 0
	for b.Loop() {
		for j := range runs {
			i := (j + n) % len(runs)
			start := time.Now()
			runs[i]()
			spent[i] = append(spent[i], time.Since(start))
		}
		n++
	}
	medians := make([]time.Duration, len(runs))
	for i, d := range spent {
		slices.Sort(d)
		medians[i] = d[len(d)/2]
	}
	return medians
}

// CopyHalves is the plain copy the float conversions are held to, of the
// same buffers: it reads src (rows of cols float32) once and writes out, 2
// bytes per value, whole. A copy cannot read more than it writes, so each
// row's first half of float32 bytes goes into the row's output and then
// its second half over it; the second store of each 8 KiB row hits L1 only.
func CopyHalves(out []byte, src []float32, cols int) {
	in := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(src))), 4*len(src))
	rowIn := 4 * cols
	for r := range len(in) / rowIn {
		x := in[r*rowIn : (r+1)*rowIn]
		y := out[r*rowIn/2 : (r+1)*rowIn/2]
		copy(y, x[:rowIn/2])
		copy(y, x[rowIn/2:])
	}
}
