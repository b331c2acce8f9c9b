package trellis

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gquant/gquant/internal/benchcpu"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// threadCPU is the CPU time of the calling thread.
func threadCPU(b *testing.B) time.Duration {
	d, ok := benchcpu.Thread()
	if !ok {
		b.Skip("no thread CPU time here")
	}
	return d
}

// BenchmarkAsmLevels quantizes the rows of quantize's BenchmarkQuantize
// (normal weights, sigma 0.02, an importance vector; 4096 columns) eight
// rows at a time, alternating between the assembly levels (see asmLevels),
// and reports each level's CPU time per eight rows and its speed against
// level 1 (the exhaustive block search). On a loaded machine, interleaving
// keeps the comparison fair where separate runs drift with the load; eight
// rows per call let each level's layout settle in the caches, as in a real
// run, rather than run on the other level's leftovers.
func BenchmarkAsmLevels(b *testing.B) {
	if len(asmLevels) < 3 {
		b.Skip("no assembly levels here")
	}
	const rows, cols = benchcpu.Rows, benchcpu.Cols
	src, imatrix := benchcpu.Weights(rows, cols)
	for _, typ := range refTypes {
		b.Run(typ.String(), func(b *testing.B) {
			defer setAsmLevel(asmLevels[len(asmLevels)-1])
			k := Kernels(kernel.Options{})[typ]
			rs, err := typ.RowSize(cols)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, 8*rs)
			levels := asmLevels[1:]
			spent := make([]time.Duration, len(levels))
			for _, level := range levels { // build the tables
				setAsmLevel(level)
				if err := k(dst, src[:cols], 1, cols, imatrix); err != nil {
					b.Fatal(err)
				}
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			n := 0
			for b.Loop() {
				row := src[n%8*cols:][:8*cols]
				for j := range levels {
					// Alternate which level goes first.
					i := (j + n) % len(levels)
					setAsmLevel(levels[i])
					start := threadCPU(b)
					if err := k(dst, row, 8, cols, imatrix); err != nil {
						b.Fatal(err)
					}
					spent[i] += threadCPU(b) - start
				}
				n++
			}
			for i, level := range levels {
				b.ReportMetric(float64(spent[i].Microseconds())/float64(n), fmt.Sprintf("level%d-cpu-us/8rows", level))
				if i > 0 && spent[i] > 0 {
					b.ReportMetric(float64(spent[0])/float64(spent[i]), fmt.Sprintf("level%d-speedup", level))
				}
			}
		})
	}
}
