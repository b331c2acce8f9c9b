package gguf

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
)

// sparseModel writes a header for the given tensors and extends the file to
// its full size without writing the data (a sparse file).
func sparseModel(t testing.TB, md Metadata, tensors []TensorInfo) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sparse.gguf")
	e := &encoder{}
	if _, err := encodeHeader(e, Version, md, append([]TensorInfo(nil), tensors...)); err != nil {
		t.Fatal(err)
	}
	size, err := FileSize(md, tensors)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, e.buf, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Skipf("cannot make a %d-byte sparse file here: %v", size, err)
	}
	return path
}

func manyTensors(n int) []TensorInfo {
	ts := make([]TensorInfo, n)
	for i := range ts {
		ts[i] = TensorInfo{Name: fmt.Sprintf("blk.%d.ffn_down_exps.weight", i), Shape: []int64{256, 4, 2}, Type: formats.Q4_K}
	}
	return ts
}

// TestRead100kTensors: the header of a 100,000-tensor file must read in well
// under a second.
func TestRead100kTensors(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	path := sparseModel(t, Metadata{{"general.architecture", StringValue("test")}}, manyTensors(100_000))
	// The best of three runs, so a busy machine does not fail the test.
	var m *Model
	elapsed := time.Hour
	for range 3 {
		start := time.Now()
		var err error
		if m, err = Open(path); err != nil {
			t.Fatal(err)
		}
		elapsed = min(elapsed, time.Since(start))
		m.Close()
	}
	if len(m.Tensors) != 100_000 || m.TensorIndex("blk.99999.ffn_down_exps.weight") != 99_999 {
		t.Fatalf("%d tensors", len(m.Tensors))
	}
	t.Logf("read 100,000 tensor infos in %v", elapsed)
	if elapsed > time.Second {
		t.Errorf("reading the header took %v, want well under a second", elapsed)
	}
}

func BenchmarkRead100kTensors(b *testing.B) {
	path := sparseModel(b, nil, manyTensors(100_000))
	b.ResetTimer()
	for b.Loop() {
		m, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// TestTerabyteModel opens a 1 TiB (sparse) model: only the header is read.
func TestTerabyteModel(t *testing.T) {
	ts := []TensorInfo{
		{Name: "huge", Shape: []int64{1 << 20, 1 << 18}, Type: formats.F32},
		{Name: "tail", Shape: []int64{32}, Type: formats.F32},
	}
	m, err := Open(sparseModel(t, nil, ts))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Tensors[0].Size != 1<<40 || m.Size() < 1<<40 {
		t.Fatalf("size %d", m.Tensors[0].Size)
	}
	var buf [128]byte
	if n, err := m.TensorReader(1).ReadAt(buf[:], 0); n != 128 || err != nil {
		t.Fatalf("reading the last tensor: %d, %v", n, err)
	}
}

// vocabHeader is the header of a model with a 256k-token vocabulary (tokens,
// scores, token types and merges: the largest arrays real files hold).
func vocabHeader(b testing.TB) []byte {
	const n = 256 << 10
	tokens := make([]string, n)
	merges := make([]string, n)
	scores := make([]float32, n)
	types := make([]int32, n)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("tok%d", i)
		merges[i] = fmt.Sprintf("t%d k%d", i, i)
		scores[i] = float32(i)
		types[i] = int32(i % 5)
	}
	md := Metadata{
		{"general.architecture", StringValue("test")},
		{"tokenizer.ggml.tokens", ArrayValue(tokens)},
		{"tokenizer.ggml.scores", ArrayValue(scores)},
		{"tokenizer.ggml.token_type", ArrayValue(types)},
		{"tokenizer.ggml.merges", ArrayValue(merges)},
	}
	return encodeFile(b, md, nil)
}

func BenchmarkReadVocab(b *testing.B) {
	file := vocabHeader(b)
	b.SetBytes(int64(len(file)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := read(file); err != nil {
			b.Fatal(err)
		}
	}
}
