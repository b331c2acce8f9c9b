package main

import (
	"bufio"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/modelgen"
)

// rssExperts is the expert count of the model of TestImatrixPeakRSS: one
// tensor of 4096 x 1 x rssExperts bf16 weights (328 MB) whose importance
// data (4096 sums per expert, 655 MB) is twice its size.
const rssExperts = 40000

// writeExpertCase writes the model and its .dat importance matrix into
// dir: one expert tensor with one row per expert, so that its importance
// data outweighs its weights, as the per-expert data of DeepSeek-R1 or
// Kimi-K2 outweighs everything a run holds at once.
func writeExpertCase(dir string, experts int) (model, dat string, err error) {
	const ne0, name = 4096, "blk.0.ffn_up_exps.weight"
	base := modelgen.MoE{Name: "rss", Arch: "qwen3moe", Layers: 1, Embd: ne0, FF: 1, Heads: 32, KVHeads: 4, HeadDim: 128,
		Vocab: 32, Experts: experts, ExpertsUsed: 8}.Model()
	m := modelgen.Model{Metadata: base.Metadata,
		Tensors: []gguf.TensorInfo{{Name: name, Type: base.Tensors[0].Type, Shape: []int64{ne0, 1, int64(experts)}}}}
	model = filepath.Join(dir, "experts-bf16.gguf")
	if err := modelgen.Write(model, m, modelgen.WriteOptions{Seed: 1}); err != nil {
		return "", "", err
	}
	dat = filepath.Join(dir, "experts.imatrix.dat")
	f, err := os.Create(dat)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	le := binary.LittleEndian
	for _, v := range []int32{1, int32(len(name))} {
		binary.Write(w, le, v)
	}
	w.WriteString(name)
	for _, v := range []int32{7, ne0 * int32(experts)} { // calls, values
		binary.Write(w, le, v)
	}
	var b [4]byte
	for i := 0; i < ne0*experts; i++ {
		le.PutUint32(b[:], math.Float32bits(float32(i%1021+1)*0.25))
		w.Write(b[:])
	}
	for _, v := range []int32{10, 0} { // chunks, no dataset name
		binary.Write(w, le, v)
	}
	if err := w.Flush(); err != nil {
		return "", "", err
	}
	return model, dat, f.Close()
}

// rssRunEnv holds, for TestImatrixPeakRSSHelper, the arguments of the gquant
// run whose peak RSS TestImatrixPeakRSS measures, separated by newlines.
const rssRunEnv = "GQUANT_TEST_RSS_RUN"

// A quantize with an importance matrix twice the size of the model, all of
// it per-expert data of one tensor, stays under 512 MiB of peak RSS (the
// kernel's rusage of a subprocess that does only that run): the run reads
// each expert's importance data as it gets there (28 MiB on this case).
// Holding the matrix whole, and its means beside it, it peaked at 1.9 GiB.
func TestImatrixPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1 GB of model and importance matrix")
	}
	dir := t.TempDir()
	model, dat, err := writeExpertCase(dir, rssExperts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.gguf")
	args := []string{"quantize", "--imatrix", dat, model, out, "Q8_0", "4"}
	cmd := exec.Command(os.Args[0], "-test.run=^TestImatrixPeakRSSHelper$", "-test.v")
	cmd.Env = append(os.Environ(), rssRunEnv+"="+strings.Join(args, "\n"))
	stdout, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !strings.Contains(string(stdout), "quantized with the importance matrix") {
		t.Fatalf("the helper did not run:\n%s", stdout)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	peak := ru.Maxrss << 10 // kilobytes on Linux
	t.Logf("Q8_0 at 4 threads, %d MiB of importance data: peak RSS %d MiB", 4096*4*rssExperts>>20, peak>>20)
	if peak >= 512<<20 {
		t.Errorf("peak RSS %d MiB, want under 512 MiB", peak>>20)
	}
}

// TestImatrixPeakRSSHelper is TestImatrixPeakRSS's subprocess; it does
// nothing in a normal run.
func TestImatrixPeakRSSHelper(t *testing.T) {
	env := os.Getenv(rssRunEnv)
	if env == "" {
		t.Skip("run by TestImatrixPeakRSS")
	}
	code, stdout, stderr := runStreams(strings.Split(env, "\n")...)
	if code != 0 || !strings.Contains(stdout, "have 1 importance matrix entries") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Log("quantized with the importance matrix")
}
