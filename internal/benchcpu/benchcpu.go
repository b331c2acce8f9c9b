// Package benchcpu measures benchmarks against the CPU time of their own
// OS thread, which a loaded machine (other jobs on the same cores) disturbs
// far less than wall time: the benchmarks report cpu-MB/s besides MB/s.
package benchcpu

import (
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
