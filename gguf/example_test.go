package gguf_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// Write a small file, then open it and list its tensors.
func Example() {
	dir, err := os.MkdirTemp("", "gguf-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")

	md := gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}
	infos := []gguf.TensorInfo{{Name: "output_norm.weight", Shape: []int64{8}, Type: formats.F32}}
	if n, err := gguf.FileSize(md, infos); err == nil {
		fmt.Println("will write", n, "bytes")
	}
	w, err := gguf.Create(path, md, infos, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort() // does nothing once Close has succeeded
	if _, err := w.Write(make([]byte, 32)); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	m, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	arch, _ := m.Metadata.Text("general.architecture")
	fmt.Println(arch)
	for _, t := range m.Tensors {
		fmt.Println(t.Name, t.Type, t.Shape, t.Size)
	}
	// Output:
	// will write 160 bytes
	// llama
	// output_norm.weight f32 [8] 32
}
