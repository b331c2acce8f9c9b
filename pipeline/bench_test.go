package pipeline

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/modelgen"
	"github.com/gquant/gquant/recipes"
)

// benchModel is a deepseek2-shaped model of about 1.3 GB of bf16 with one MoE
// layer whose expert tensors are 400 MB each.
var benchModel = modelgen.DeepSeek2{Name: "bench-1g", Layers: 2, DenseLayers: 1, Embd: 2048, FF: 4096,
	ExpertFF: 1536, Experts: 64, ExpertsUsed: 6, SharedExperts: 1, Heads: 16, QLoraRank: 512,
	KVLoraRank: 512, KeyLength: 192, ValueLength: 128, RopeDim: 64, Vocab: 32000, ExpProbsB: true}

// processCPU is the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS returns the process's peak resident set size (VmHWM) in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkQuantizeModel quantizes a generated 1.3 GB model and reports
// input MB/s and the peak RSS. Run with: go test ./pipeline -run XXX -bench QuantizeModel -benchtime 1x
func BenchmarkQuantizeModel(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, "in.gguf")
	if err := modelgen.Write(in, benchModel.Model(), modelgen.WriteOptions{Seed: 1}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		ft      string
		threads int
	}{{"Q8_0", 1}, {"Q8_0", 2}, {"Q4_K_M", 1}, {"Q4_K_M", 2}} {
		ft := c.ft
		b.Run(ft+"/threads="+strconv.Itoa(c.threads), func(b *testing.B) {
			m, err := gguf.Open(in)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			fileType, _, err := recipes.ParseFileType(ft)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(m.Size())
			for i := 0; i < b.N; i++ {
				plan, err := Build(m, Config{Selection: recipes.Options{FileType: fileType}, Output: filepath.Join(dir, "out.gguf")})
				if err != nil {
					b.Fatal(err)
				}
				start, cpu0 := time.Now(), processCPU()
				if err := Run(context.Background(), m, plan.Outputs, Options{Threads: c.threads}); err != nil {
					b.Fatal(err)
				}
				wall := time.Since(start)
				b.ReportMetric(float64(m.Size())/wall.Seconds()/1e6, "MB/s-input")
				// Cores kept busy: 2 means no idle core on a two-core machine.
				b.ReportMetric((processCPU()-cpu0).Seconds()/wall.Seconds(), "cores-busy")
			}
			b.ReportMetric(float64(peakRSS())/(1<<20), "MiB-peak-RSS")
		})
	}
}

// BenchmarkConvertPiece converts one piece of 512 rows of 4096 bf16 weights
// (a run's piece size) as a worker does ("run": in chunks of rows whose
// float32 stays in the core's L2 cache, convertChunks, and f16 and q8_KV
// in one pass, convertOnePass) and whole (one float32 copy of the piece,
// 8 MB), for the types whose kernels are fast enough for the difference to
// show. MB/s of bf16 input, one thread.
// Run with: go test ./pipeline -run XXX -bench ConvertPiece -count 5
func BenchmarkConvertPiece(b *testing.B) {
	const ne0, rows = 4096, 512
	in := &gguf.Model{Tensors: []gguf.Tensor{{TensorInfo: gguf.TensorInfo{Name: "blk.0.ffn_up.weight", Shape: []int64{ne0, rows}, Type: formats.BF16}}}}
	raw := make([]byte, 2*ne0*rows)
	for i := 0; i < ne0*rows; i++ {
		v := float32(math.Sin(float64(i))) * 0.02
		binary.LittleEndian.PutUint16(raw[2*i:], formats.FP32ToBF16(v))
	}
	for _, typ := range []formats.Type{formats.F16, formats.Q8_0, formats.Q8_KV, formats.Q8_KV_R8, formats.BF16_R16, formats.Q4_K} {
		t := Tensor{Name: "blk.0.ffn_up.weight", Shape: []int64{ne0, rows}, Type: typ, Convert: true}
		for _, whole := range []bool{false, true} {
			var quantize func(Tensor, *piece) error
			name := typ.String() + "/run"
			if whole {
				quantize, name = quantizePiece, typ.String()+"/whole"
			}
			b.Run(name, func(b *testing.B) {
				p := &piece{rows: rows, buf: &buffers{raw: raw}}
				var deq []float32
				b.SetBytes(int64(len(raw)))
				for i := 0; i < b.N; i++ {
					if err := convertPiece(in, t, p, quantize, &deq); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
