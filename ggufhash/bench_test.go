package ggufhash

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// benchModel writes a model of n bf16 tensors of 4096 x 1024 (8 MiB each) in
// dir: 64 make 512 MiB, enough to time the read-ahead and the digests, small
// enough to stay in the page cache (so the benchmark times our side, not the
// disk; compare with the "read" case, which only reads).
func benchModel(b *testing.B, dir string, n int) *gguf.Model {
	infos := make([]gguf.TensorInfo, n)
	for i := range infos {
		infos[i] = gguf.TensorInfo{Name: "blk." + strconv.Itoa(i) + ".ffn_up.weight", Shape: []int64{4096, 1024}, Type: formats.BF16}
	}
	path := filepath.Join(dir, "bench.gguf")
	w, err := gguf.Create(path, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}, infos, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	chunk := stream(1<<20, 7)
	for range n * 8 {
		if _, err := w.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkHashModel times HashModel on a 512 MiB model in the page cache;
// MB/s is tensor bytes per second. "read" reads the same bytes in the same
// chunks and hashes nothing: the ceiling.
func BenchmarkHashModel(b *testing.B) {
	m := benchModel(b, b.TempDir(), 64)
	defer m.Close()
	var total int64
	for _, t := range m.Tensors {
		total += t.Size
	}
	b.Run("read", func(b *testing.B) {
		buf := make([]byte, DefaultChunkSize)
		b.SetBytes(total)
		for b.Loop() {
			for i, t := range m.Tensors {
				r := m.TensorReader(i)
				for off := int64(0); off < t.Size; off += int64(len(buf)) {
					k := min(int64(len(buf)), t.Size-off)
					if _, err := r.ReadAt(buf[:k], off); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	})
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"xxh64", Options{}}, // the default: per tensor and per file
		{"xxh64-no-layer", Options{NoTensors: true}},
		{"xxh3", Options{Kinds: KindsOf(XXH3)}},
		{"sha1", Options{Kinds: KindsOf(SHA1)}},
		{"sha256", Options{Kinds: KindsOf(SHA256)}},
		{"all-uuid", Options{Kinds: AllHashes | KindsOf(UUID)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(total)
			for b.Loop() {
				if err := HashModel(m, tc.opts, func(*Result) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTensorHasher is the cost of recording a tensor's xxh64 while it
// streams (the quantize pipeline's sidecars), in 1 MiB pieces.
func BenchmarkTensorHasher(b *testing.B) {
	p := stream(1<<20, 9)
	const pieces = 16
	h := NewTensorHasher(KindsOf(XXH64), pieces*int64(len(p)))
	b.SetBytes(pieces * int64(len(p)))
	for b.Loop() {
		h.Reset(pieces * int64(len(p)))
		for range pieces {
			h.Write(p)
		}
		if _, err := h.Sum(); err != nil {
			b.Fatal(err)
		}
	}
}
