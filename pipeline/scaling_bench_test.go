package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// standIn is a CPU-only stand-in kernel: work dependent multiply-adds per
// weight, then output bytes of the tensor's type derived from them (not a
// real encoding). It replaces the quantize kernels so that a benchmark
// measures the pipeline: reading, conversion, ordering and writing.
func standIn(work int) func(t Tensor, p *piece) error {
	return func(t Tensor, p *piece) error {
		ne0, _, _ := gguf.Dims(t.Shape)
		rowSize, err := t.Type.RowSize(ne0)
		if err != nil {
			return err
		}
		p.buf.out = grow(p.buf.out, int(p.rows*rowSize))
		p.dst = p.buf.out
		var acc float32
		for _, v := range p.src {
			x := v
			for range work {
				x = x*0.999 + 0.001
			}
			acc += x
		}
		for i := range p.dst {
			p.dst[i] = byte(acc) + byte(i)
		}
		return nil
	}
}

// threadCPU is the CPU time of the calling thread (Linux), else 0.
func threadCPU() time.Duration {
	if runtime.GOOS != "linux" {
		return 0
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // RUSAGE_THREAD
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPipelineScaling runs the whole pipeline on a 64 MiB bf16 model
// in a temporary file (8 tensors of 2048 x 2048 to q8_0 bytes) with the
// stand-in kernel at 1, 2, 4 and 8 workers, and reports:
//   - MB/s: bf16 input bytes per second of the run;
//   - cores-busy: process CPU time over wall time (all goroutines);
//   - reader-MB/s-max, writer-MB/s-max, in-hasher-MB/s-max,
//     out-hasher-MB/s-max: the input bytes over the CPU time of the one
//     reader, writer, input hasher and output hasher goroutine (their
//     thread's, on Linux), the rate at which each alone would stop the run from going
//     faster, however many workers there are. Time blocked in a system
//     call does not count (a write waiting for the disk; the input is in
//     the page cache here, and the fsyncs are the syncer's).
//
// work=0 is the pipeline alone (bf16 conversion, I/O, hashing, ordering);
// work=16 costs about as much per weight as a k-quant, so that the
// workers, not the reader, the writer or the hashers, should bound it. Busy cores cannot
// pass the machine's cores, so beyond them MB/s stays flat; what it shows
// there is that oversubscribing costs nothing.
func BenchmarkPipelineScaling(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, "in.gguf")
	var infos []gguf.TensorInfo
	var tensors []Tensor
	for i := range 8 {
		name := fmt.Sprintf("blk.%d.ffn_up.weight", i)
		infos = append(infos, gguf.TensorInfo{Name: name, Shape: []int64{2048, 2048}, Type: formats.BF16})
		tensors = append(tensors, Tensor{Name: name, Shape: []int64{2048, 2048}, Source: i, Type: formats.Q8_0, Convert: true})
	}
	writeModel(b, in, infos)
	m, err := gguf.Open(in)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	out := filepath.Join(dir, "out.gguf")
	for _, work := range []int{0, 16} {
		for _, threads := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("work=%d/threads=%d", work, threads), func(b *testing.B) {
				b.SetBytes(m.Size())
				st := pipeStats{threadCPU: threadCPU}
				var wall, cpu time.Duration
				for i := 0; i < b.N; i++ {
					start, cpu0 := time.Now(), processCPU()
					err := Run(context.Background(), m, []Output{{Path: out, Tensors: tensors}},
						Options{Threads: threads, quantize: standIn(work), stats: &st})
					if err != nil {
						b.Fatal(err)
					}
					wall += time.Since(start)
					cpu += processCPU() - cpu0
				}
				mb := float64(m.Size()) * float64(b.N) / 1e6
				b.ReportMetric(mb/wall.Seconds(), "MB/s")
				b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores-busy")
				b.ReportMetric(mb/st.reader.Seconds(), "reader-MB/s-max")
				b.ReportMetric(mb/st.writer.Seconds(), "writer-MB/s-max")
				b.ReportMetric(mb/st.inHasher.Seconds(), "in-hasher-MB/s-max")
				b.ReportMetric(mb/st.outHasher.Seconds(), "out-hasher-MB/s-max")
			})
		}
	}
}
