package modelgen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

func TestDeepSeekR1Layout(t *testing.T) {
	m := DeepSeekR1.Model()
	f32 := 0
	var bf16Elems int64
	for _, ti := range m.Tensors {
		if ti.Type == formats.F32 {
			f32++
		} else {
			bf16Elems += ti.Elements()
		}
	}
	if len(m.Tensors) != 1025 || f32 != 361 {
		t.Errorf("DeepSeek-R1: %d tensors, %d f32; want 1025, 361", len(m.Tensors), f32)
	}
	// 671B parameters, the model's name says.
	if bf16Elems < 670e9 || bf16Elems > 672e9 {
		t.Errorf("DeepSeek-R1 has %d quantizable weights", bf16Elems)
	}
}

func TestPresetsWriteHeaderOnly(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"deepseek-r1", "kimi-k2", "qwen3-235b", "tiny-deepseek2", "tiny-llama"} {
		t.Run(name, func(t *testing.T) {
			m, err := Preset(name)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+".gguf")
			if err := WriteFile(path, m, WriteOptions{HeaderOnly: true}); err != nil {
				t.Fatal(err)
			}
			want, err := gguf.FileSize(m.Metadata, m.Tensors)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != want {
				t.Errorf("size %d, want %d", st.Size(), want)
			}
		})
	}
}

func TestWriteTinyData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := WriteFile(path, TinyDeepSeek2.Model(), WriteOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if arch, _ := m.Metadata.Text("general.architecture"); arch != "deepseek2" {
		t.Errorf("architecture %q", arch)
	}
}
