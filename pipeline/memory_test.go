package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/modelgen"
	"github.com/gquant/gquant/recipes"
)

// writeModel writes a model of the given bf16 and f32 tensors, each filled
// with small sines.
func writeModel(t testing.TB, path string, infos []gguf.TensorInfo) {
	t.Helper()
	w, err := gguf.Create(path, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}, infos, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, ti := range infos {
		n := ti.Elements()
		var buf []byte
		for i := int64(0); i < n; i++ {
			v := float32(math.Sin(float64(i*(int64(k)+3))) * 0.02)
			if ti.Type == formats.F32 {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			} else {
				buf = binary.LittleEndian.AppendUint16(buf, formats.FP32ToBF16(v))
			}
		}
		if _, err := w.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// The bytes held by pieces in flight (read, not yet written: input rows,
// float32 rows and output, and every buffer kept for reuse) never pass
// Options.Memory, whatever the number of workers, on tensors several times
// larger than it; a piece larger than the budget on its own goes alone. The
// output is the same at every thread count and budget.
func TestMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	infos := []gguf.TensorInfo{
		{Name: "blk.0.ffn_up.weight", Shape: []int64{2048, 512}, Type: formats.BF16},          // 7 MiB converted to q8_0
		{Name: "blk.0.ffn_down.weight", Shape: []int64{512, 2048}, Type: formats.BF16},        // to iq4_xs_r8: 8-row groups
		{Name: "blk.0.attn_norm.weight", Shape: []int64{2048}, Type: formats.F32},             // copied
		{Name: "blk.0.ffn_gate.weight", Shape: []int64{4096, 320}, Type: formats.BF16},        // copied, 2.5 MiB
		{Name: "blk.0.ffn_gate_exps.weight", Shape: []int64{256, 256, 4}, Type: formats.BF16}, // q2_K: one call per matrix
		{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{512, 1024, 2}, Type: formats.F32},   // q2_K: calls above the budget, scanned and split
		{Name: "blk.0.ffn_down_exps.weight", Shape: []int64{512, 1024, 3}, Type: formats.F32}, // q2_K: an odd count, calls of 32 rows
		{Name: "blk.0.attn_k.weight", Shape: []int64{1 << 19, 2}, Type: formats.F32},          // q8_0: one row above the budget
	}
	writeModel(t, in, infos)
	m, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tensors := []Tensor{
		{Name: infos[0].Name, Shape: infos[0].Shape, Source: 0, Type: formats.Q8_0, Convert: true},
		{Name: infos[1].Name, Shape: infos[1].Shape, Source: 1, Type: formats.IQ4_XS_R8, Convert: true},
		{Name: infos[2].Name, Shape: infos[2].Shape, Source: 2, Type: formats.F32},
		{Name: infos[3].Name, Shape: infos[3].Shape, Source: 3, Type: formats.BF16},
		{Name: infos[4].Name, Shape: infos[4].Shape, Source: 4, Type: formats.Q2_K, Convert: true},
		{Name: infos[5].Name, Shape: infos[5].Shape, Source: 5, Type: formats.Q2_K, Convert: true},
		{Name: infos[6].Name, Shape: infos[6].Shape, Source: 6, Type: formats.Q2_K, Convert: true},
		{Name: infos[7].Name, Shape: infos[7].Shape, Source: 7, Type: formats.Q8_0, Convert: true},
	}
	// One row of the last tensor.
	oversized := need{raw: 4 << 19, f32: 1 << 19, out: 34 << 14}.bytes()
	run := func(opt Options) []byte {
		t.Helper()
		out := filepath.Join(dir, "out.gguf")
		if err := Run(context.Background(), m, []Output{{Path: out, Tensors: tensors}}, opt); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := run(Options{Threads: 2})
	t.Run("below the floor", func(t *testing.T) {
		// Raised to minMemory: a copy's two byte pieces fit beside each
		// other (a deadlock would end at the deadline).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out := filepath.Join(dir, "small.gguf")
		if err := Run(ctx, m, []Output{{Path: out, Tensors: tensors}}, Options{Threads: 3, Memory: 1000}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
			t.Error("output differs")
		}
	})
	for _, budget := range []int64{1 << 20, 3 << 20} {
		for _, threads := range []int{1, 2, 64, 128} {
			t.Run(fmt.Sprintf("memory=%dMiB/threads=%d", budget>>20, threads), func(t *testing.T) {
				var mu sync.Mutex
				var peakInUse, peakHeld, peakNormal int64
				report := func(inUse, held int64, pieces int) {
					mu.Lock()
					defer mu.Unlock()
					peakInUse, peakHeld = max(peakInUse, inUse), max(peakHeld, held)
					if held > budget && (pieces > 1 || held != oversized) {
						t.Errorf("%d bytes held with a budget of %d (%d lent to %d pieces in flight)", held, budget, inUse, pieces)
					}
					if held <= budget {
						peakNormal = max(peakNormal, held)
					}
				}
				got := run(Options{Threads: threads, Memory: budget, memoryReport: report})
				if !bytes.Equal(got, want) {
					t.Errorf("output differs from the two-thread run with the default budget")
				}
				if peakHeld != oversized {
					t.Errorf("peak %d bytes held, want the oversized call's %d", peakHeld, oversized)
				}
				// The bound is what limits: pieces fill it.
				if threads >= 2 && peakNormal < budget/2 {
					t.Errorf("at most %d bytes held outside the oversized call, under half the budget of %d", peakNormal, budget)
				}
				t.Logf("peak lent %d, held %d (outside the oversized call %d), budget %d", peakInUse, peakHeld, peakNormal, budget)
			})
		}
	}
}

// rssModel has a few large bf16 tensors (424 MiB): with two pieces of 2^21
// weights per worker, a quantize to Q8_0 with 64 workers peaked at 1.5 GiB
// (before Options.Memory).
var rssModel = modelgen.MoE{Name: "rss", Arch: "llama", Layers: 1, Embd: 4096, FF: 14336, Heads: 32, KVHeads: 8,
	HeadDim: 128, Vocab: 512}

// rssHelperEnv names the model a subprocess of the test binary quantizes
// for TestPeakRSSThreads64.
const rssHelperEnv = "GQUANT_TEST_RSS_MODEL"

// A whole-file quantize with 64 workers stays under 512 MiB of peak RSS
// (the process's maximum resident set, from the kernel's rusage of a
// subprocess that does only that run), and so does one that asks for 2^30
// (a THREADS of 99999999999 once made a channel of that size and died out
// of memory; workers stop at MaxThreads).
func TestPeakRSSThreads64(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 270 MiB model")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is part of the peak RSS")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	if err := modelgen.Write(in, rssModel.Model(), modelgen.WriteOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ft, threads string }{{"Q8_0", "64"}, {"Q8_0", "1073741824"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSHelper$", "-test.v")
		cmd.Env = append(os.Environ(), rssHelperEnv+"="+in, "GQUANT_TEST_RSS_TYPE="+tc.ft, "GQUANT_TEST_RSS_THREADS="+tc.threads)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s at %s threads: %v\n%s", tc.ft, tc.threads, err, out)
		}
		if !bytes.Contains(out, []byte("quantized")) {
			t.Fatalf("%s: the helper did not run:\n%s", tc.ft, out)
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			t.Skip("no rusage on this system")
		}
		peak := ru.Maxrss << 10 // kilobytes on Linux
		t.Logf("%s at %s threads: peak RSS %d MiB", tc.ft, tc.threads, peak>>20)
		if peak >= 512<<20 {
			t.Errorf("%s at %s threads: peak RSS %d MiB, want under 512 MiB", tc.ft, tc.threads, peak>>20)
		}
	}
}

// TestPeakRSSHelper is TestPeakRSSThreads64's subprocess; it does nothing
// in a normal run.
func TestPeakRSSHelper(t *testing.T) {
	path := os.Getenv(rssHelperEnv)
	if path == "" {
		t.Skip("run by TestPeakRSSThreads64")
	}
	threads, _ := strconv.Atoi(os.Getenv("GQUANT_TEST_RSS_THREADS"))
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ft, _, err := recipes.ParseFileType(os.Getenv("GQUANT_TEST_RSS_TYPE"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(m, Config{Selection: recipes.Options{FileType: ft}, Output: path + ".out"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), m, plan.Outputs, Options{Threads: threads}); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + ".out")
	os.Remove(SidecarPath(path + ".out"))
	t.Logf("quantized %s", path)
}
