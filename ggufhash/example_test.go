package ggufhash_test

import (
	"fmt"
	"io"
	"log"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/ggufhash"
)

// Record a tensor's xxh64 while its bytes stream to wherever they go (here
// io.Discard; in the quantize pipeline, the converter), as a sidecar would.
func ExampleTensorHasher() {
	m, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	t := m.Tensors[0]
	h := ggufhash.NewTensorHasher(ggufhash.KindsOf(ggufhash.XXH64), t.Size)
	if _, err := io.Copy(io.Discard, io.TeeReader(m.TensorReader(0), h)); err != nil {
		log.Fatal(err)
	}
	sums, err := h.Sum()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %016x\n", t.Name, sums.XXH64())
	fmt.Println(sums.Text(ggufhash.XXH64))
	// Output:
	// token_embd.weight ea45498b1e9b8813
	// ea45498b1e9b8813
}

// Print a model's manifest as llama-gguf-hash --sha256 does.
func ExampleHashModel() {
	m, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	opts := ggufhash.Options{Kinds: ggufhash.KindsOf(ggufhash.SHA256), NoTensors: true}
	err = ggufhash.HashModel(m, opts, func(r *ggufhash.Result) error {
		fmt.Println(r.Line(ggufhash.SHA256))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// sha256    c43a9e0fecc80309f5b53e088a7da01ef4b27dc15dffe7c89b968e89b50925af  ../testdata/tiny-deepseek2-bf16.gguf
}
