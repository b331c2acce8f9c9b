package iquant

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/benchcpu"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// BenchmarkAsmLevels times this package's kernels at each assembly level
// this build and CPU run (asmLevels: 0 the portable Go, 1 AVX2/FMA, 2 with
// the AVX-512 kernels on top), on the shape of quantize's BenchmarkQuantize
// (64 rows of 4096 normal weights, sigma 0.02, fixed seed, an importance
// vector; MB/s of bf16 input), so that one process on an AVX-512 machine
// shows what AVX2-only machines run too, e.g.
//
//	go test ./quantize/internal/iquant -run '^$' -bench 'AsmLevels/iq1_m/' -count 5
//
// Besides MB/s it reports cpu-MB/s, against the CPU time of the benchmark's
// thread (Linux), which stays meaningful on a loaded machine.
func BenchmarkAsmLevels(b *testing.B) {
	const rows, cols = benchcpu.Rows, benchcpu.Cols
	src, imatrix := benchcpu.Weights(rows, cols)
	defer setAsm(true)
	kernels := Kernels(kernel.Options{})
	types := make([]formats.Type, 0, len(kernels))
	for t := range kernels {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b formats.Type) int { return int(a) - int(b) })
	for _, t := range types {
		rs, err := t.RowSize(cols)
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]byte, rows*int(rs))
		for _, level := range asmLevels {
			b.Run(fmt.Sprintf("%s/level=%d", t, level), func(b *testing.B) {
				setAsmLevel(level)
				benchcpu.Loop(b, rows*cols*2, func() error {
					return kernels[t](dst, src, rows, cols, imatrix)
				})
			})
		}
	}
}
