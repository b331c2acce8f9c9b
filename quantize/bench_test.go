package quantize_test

import (
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/benchcpu"
	"github.com/gquant/gquant/quantize"
)

// BenchmarkQuantize times one QuantizeRows call per type over 64 rows of 4096
// normal weights (sigma 0.02, fixed seed) with an importance matrix, the
// setting of ../shared/bench/reference-quantize-speed.tsv. SetBytes counts
// the bf16 input (2 bytes per weight), so MB/s compares with that table.
// Besides wall-clock MB/s it reports cpu-MB/s, against the CPU time of the
// benchmark's thread, which stays meaningful on a loaded machine. One call
// before the timed loop builds the type's tables, as the reference's figures
// exclude that too. Run with -tags purego for the portable kernels.
// `go run ./internal/benchratio BENCH.txt` turns the output into ratios to
// the reference, per type. The first sub-benchmark, copy, is the plain copy
// of the same buffers the float conversions are held to (benchCopy).
func BenchmarkQuantize(b *testing.B) {
	const rows, cols = benchcpu.Rows, benchcpu.Cols
	src, imatrix := benchcpu.Weights(rows, cols)
	benchCopy(b, src, cols)
	for _, t := range quantize.SupportedTypes() {
		if info, _ := t.Info(); info.ImatrixFails {
			// The ARM repacks of q4_0 take no importance data.
			benchQuantizeType(b, "noimat/"+t.String(), t, rows, cols, src, nil)
			continue
		}
		benchQuantizeType(b, t.String(), t, rows, cols, src, imatrix)
	}
	// The K-quants search differently without an importance matrix
	// (make_qkx2_quants, make_q3_quants), and the legacy types take the
	// reference's plain quantize_row_*_ref, as llama-quantize runs them when
	// given none.
	for _, t := range []formats.Type{formats.Q2_K, formats.Q3_K, formats.Q4_K, formats.Q5_K, formats.Q6_K,
		formats.Q4_0, formats.Q4_1, formats.Q5_0, formats.Q5_1, formats.Q6_0, formats.Q4_0_R8, formats.Q5_0_R4, formats.Q6_0_R4} {
		benchQuantizeType(b, "noimat/"+t.String(), t, rows, cols, src, nil)
	}
}

// benchCopy times the plain copy the float conversions (f16, bf16,
// bf16_r16) are held to, "copy", with the same SetBytes (2 bytes per
// weight) and the same CPU-time metric. "The same buffers" means what a
// conversion moves: it reads the float32 input (4 bytes per weight, the
// benchmark's src itself) and writes an output of 2 bytes per weight. A
// copy() cannot read more than it writes, so per row of cols weights the
// baseline copies the first half of the row's float32 bytes into the row's
// output and then the second half over it: every input byte is read once,
// from the same memory, and the output buffer of the conversions' size is
// written whole. Each output row is stored twice, the second time while it
// is still in L1 (a row's output is 8 KiB), so the extra stores cost L1
// bandwidth only: on the AMD EPYC (Zen 5, "Turin-like") this was written
// on, an assembly loop that loads 4 bytes and stores 2 per weight with
// nothing else ran 2-6 % faster than this copy, both bound by the 1.5 MiB
// the loop streams through the caches (more than Zen 5's 1 MiB L2).
// f16 and bf16 read their input in order, as this copy does, and run at
// its speed there. bf16_r16 cannot: each 64-byte output line holds a pair
// of columns of all 16 rows of a group, so it reads 16 streams 16 KiB
// apart, which share L1 sets; its kernels run half the rows a few hundred
// bytes behind the other half (legacy's r16Lag), which took it from
// 0.66-0.75x of this copy to about 0.9x there.
func benchCopy(b *testing.B, src []float32, cols int) {
	copyRows := copier(src, cols)
	b.Run("copy", func(b *testing.B) {
		benchcpu.Loop(b, 2*len(src), func() error {
			copyRows()
			return nil
		})
	})
}

// copier returns benchCopy's copy of src (rows of cols weights),
// benchcpu.CopyHalves into an output of the conversions' size.
func copier(src []float32, cols int) func() {
	out := make([]byte, 2*len(src))
	return func() { benchcpu.CopyHalves(out, src, cols) }
}

// BenchmarkFloatVsCopy holds the float conversions to benchCopy's copy in
// one loop: each iteration times the copy and every conversion of
// BenchmarkQuantize's rows once, in turn (the order rotates), and the
// benchmark reports each conversion's median time over the copy's as
// TYPE-x-copy (1 is the copy's speed, higher is faster). Timed side by side
// the ratios hold within a few percent on a shared machine, where separate
// sub-benchmarks drift with the load by more than the gap being measured.
// GODEBUG=cpu.avx512f=off measures the AVX2 kernels.
func BenchmarkFloatVsCopy(b *testing.B) {
	const rows, cols = benchcpu.Rows, benchcpu.Cols
	src, _ := benchcpu.Weights(rows, cols)
	types := []formats.Type{formats.F16, formats.BF16, formats.BF16_R16}
	copyRows := copier(src, cols)
	runs := []func(){copyRows}
	for _, t := range types {
		rs, err := t.RowSize(int64(cols))
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]byte, int(rs)*rows)
		runs = append(runs, func() {
			if err := quantize.QuantizeRowsInto(dst, t, rows, cols, src, nil); err != nil {
				b.Fatal(err)
			}
		})
	}
	med := benchcpu.SideBySide(b, runs)
	c := float64(med[0])
	b.ReportMetric(float64(2*rows*cols)/c*1e3, "copy-MB/s")
	for i, t := range types {
		b.ReportMetric(c/float64(med[i+1]), t.String()+"-x-copy")
	}
}

// benchQuantizeType is one sub-benchmark of BenchmarkQuantize.
func benchQuantizeType(b *testing.B, name string, t formats.Type, rows, cols int, src, imatrix []float32) {
	rs, err := t.RowSize(int64(cols))
	if err != nil {
		return
	}
	n := rows - rows%t.Interleave()
	if n == 0 {
		return
	}
	b.Run(name, func(b *testing.B) {
		dst := make([]byte, int(rs)*n)
		benchcpu.Loop(b, n*cols*2, func() error {
			return quantize.QuantizeRowsInto(dst, t, n, cols, src[:n*cols], imatrix)
		})
	})
}
