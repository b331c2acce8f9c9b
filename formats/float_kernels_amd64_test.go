//go:build amd64 && !purego

package formats

import (
	"testing"

	"github.com/gquant/gquant/internal/benchcpu"
	"github.com/gquant/gquant/internal/cpu"
)

// BenchmarkFloatKernels times every f16 and bf16 conversion kernel this CPU
// can run, for AMD and for Intel, side by side with a plain copy of the same
// buffers (as quantize's BenchmarkFloatVsCopy does, over BenchmarkQuantize's
// 64 rows of 4096 weights) and reports each one's median time over the
// copy's as NAME-x-copy (higher is faster). All share one output buffer, so
// the 1.5 MiB stay in a 2 MiB L2 and the loops, not the memory, are timed:
// this is how intelKernels was chosen.
func BenchmarkFloatKernels(b *testing.B) {
	kernels := []struct {
		name string
		f    func(dst *byte, src *float32, n int) uint32
		need bool
	}{
		{"f16-avx512", fp32ToFP16AVX512, cpu.X86.HasAVX512},
		{"f16-avx512-intel", fp32ToFP16AVX512Mem, cpu.X86.HasAVX512},
		{"f16-avx2", fp32ToFP16F16C, true},
		{"f16-avx2-intel", fp32ToFP16F16CMem, true},
		{"bf16-avx512", fp32ToBF16AVX512, cpu.X86.HasAVX512},
		{"bf16-avx2", fp32ToBF16AVX2, true},
		{"bf16-avx2-intel", fp32ToBF16AVX2Shift, true},
	}
	if !useAVX2F16C {
		b.Skip("no AVX2 and F16C")
	}
	const rows, cols = benchcpu.Rows, benchcpu.Cols
	src, _ := benchcpu.Weights(rows, cols)
	out := make([]byte, 2*len(src))
	names := []string{"copy"}
	runs := []func(){func() { benchcpu.CopyHalves(out, src, cols) }}
	for _, k := range kernels {
		if !k.need {
			continue
		}
		names = append(names, k.name)
		runs = append(runs, func() {
			for r := range rows {
				k.f(&out[2*r*cols], &src[r*cols], cols)
			}
		})
	}
	med := benchcpu.SideBySide(b, runs)
	b.ReportMetric(float64(2*rows*cols)/float64(med[0])*1e3, "copy-MB/s")
	for i := 1; i < len(runs); i++ {
		b.ReportMetric(float64(med[0])/float64(med[i]), names[i]+"-x-copy")
	}
}
