//go:build amd64 && !purego

package legacy

import (
	"fmt"
	"testing"

	"github.com/gquant/gquant/internal/benchcpu"
)

// BenchmarkBF16R16Lags times bf16_r16 over BenchmarkQuantize's 64 rows of
// 4096 weights at each lag of bf16R16Lags, with AVX-512 (where the CPU has
// it) and AVX2, side by side with a copy of the same buffers (see quantize's
// BenchmarkFloatVsCopy), and reports each one's median time over the copy's
// as BITS-lagN-x-copy: this is how r16Lag was chosen.
func BenchmarkBF16R16Lags(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2")
	}
	defer func(l int, u bool) { r16Lag, useAVX512 = l, u }(r16Lag, useAVX512)
	const rows, cols = benchcpu.Rows, benchcpu.Cols
	src, _ := benchcpu.Weights(rows, cols)
	out := make([]byte, 2*len(src))
	names := []string{"copy"}
	runs := []func(){func() { benchcpu.CopyHalves(out, src, cols) }}
	for _, wide := range []bool{true, false} {
		if wide && !useAVX512 {
			continue
		}
		for _, lag := range bf16R16Lags {
			names = append(names, fmt.Sprintf("%d-lag%d", map[bool]int{true: 512, false: 256}[wide], lag))
			runs = append(runs, func() {
				r16Lag, useAVX512 = lag, wide
				if err := quantizeBF16R16(out, src, rows, cols, nil); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
	med := benchcpu.SideBySide(b, runs)
	b.ReportMetric(float64(2*rows*cols)/float64(med[0])*1e3, "copy-MB/s")
	for i := 1; i < len(runs); i++ {
		b.ReportMetric(float64(med[0])/float64(med[i]), names[i]+"-x-copy")
	}
}
