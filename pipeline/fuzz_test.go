package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/recipes"
)

// fuzzValue makes a metadata value of the type kind selects, so that every
// key the type choice reads can be fuzzed with every GGUF type.
func fuzzValue(kind byte, n int64, s string) gguf.Value {
	switch kind % 13 {
	case 0:
		return gguf.Uint8Value(uint8(n))
	case 1:
		return gguf.Int32Value(int32(n))
	case 2:
		return gguf.Uint32Value(uint32(n))
	case 3:
		return gguf.Int64Value(n)
	case 4:
		return gguf.Uint64Value(uint64(n))
	case 5:
		return gguf.Float32Value(float32(n))
	case 6:
		return gguf.StringValue(s)
	case 7:
		return gguf.BoolValue(n&1 == 1)
	case 8:
		return gguf.ArrayValue([]int32{int32(n), int32(n / 2)})
	case 9:
		return gguf.ArrayValue([]string{s, s})
	case 10:
		return gguf.ArrayValue([]uint64{})
	case 11:
		return gguf.ArrayValue([]gguf.Value{gguf.ArrayValue([]int32{int32(n)})})
	default:
		return gguf.Int16Value(int16(n))
	}
}

// fuzzKeys are the keys recipes.ModelParams reads below the architecture.
var fuzzKeys = []string{"block_count", "expert_count", "attention.head_count", "attention.head_count_kv", "vocab_size", "embedding_length"}

// fuzzMetadata builds a model's metadata from fuzz input: spec[0] picks the
// architecture's type, spec[1+i] the type of fuzzKeys[i], then of
// general.file_type and tokenizer.ggml.tokens; a spec byte of 255 leaves the
// key out.
func fuzzMetadata(spec []byte, arch string, n int64, s string) gguf.Metadata {
	at := func(i int) byte {
		if i < len(spec) {
			return spec[i]
		}
		return 2 // u32
	}
	md := gguf.Metadata{}
	if k := at(0); k%3 == 0 {
		md.Set("general.architecture", fuzzValue(k/3, n, s))
	} else {
		md.Set("general.architecture", gguf.StringValue(arch))
	}
	for i, key := range fuzzKeys {
		if k := at(1 + i); k != 255 {
			md.Set(arch+"."+key, fuzzValue(k, n>>uint(i), s))
		}
	}
	if k := at(1 + len(fuzzKeys)); k != 255 {
		md.Set("general.file_type", fuzzValue(k, n, s))
	}
	if k := at(2 + len(fuzzKeys)); k != 255 {
		md.Set("tokenizer.ggml.tokens", fuzzValue(k, n, s))
	}
	return md
}

// fuzzTensors is a small model with the names the built-in mixtures look at.
func fuzzTensors(layers int, ne0 int64) []gguf.TensorInfo {
	ts := []gguf.TensorInfo{{Name: "token_embd.weight", Shape: []int64{ne0, 8}, Type: formats.BF16}}
	for l := 0; l < layers; l++ {
		for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_up", "ffn_gate", "ffn_down"} {
			ts = append(ts, gguf.TensorInfo{Name: fmt.Sprintf("blk.%d.%s.weight", l, n), Shape: []int64{ne0, 8}, Type: formats.BF16})
		}
		ts = append(ts, gguf.TensorInfo{Name: fmt.Sprintf("blk.%d.ffn_down_exps.weight", l), Shape: []int64{ne0, 8, 2}, Type: formats.BF16},
			gguf.TensorInfo{Name: fmt.Sprintf("blk.%d.attn_norm.weight", l), Shape: []int64{ne0}, Type: formats.F32})
	}
	return append(ts, gguf.TensorInfo{Name: "output.weight", Shape: []int64{ne0, 8}, Type: formats.BF16})
}

// writeFuzzModel writes a header-only (sparse) model and opens it.
func writeFuzzModel(t testing.TB, dir string, md gguf.Metadata, tensors []gguf.TensorInfo) (*gguf.Model, error) {
	path := filepath.Join(dir, "m.gguf")
	w, err := gguf.Create(path, md, tensors, nil)
	if err != nil {
		return nil, err
	}
	if err := w.SkipRemaining(); err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return gguf.Open(path)
}

var fuzzFileTypes = recipes.FileTypeNames()

// FuzzModelParams: no metadata, whatever its types and values, makes the
// model-parameter and type-choice path panic. A key of the wrong type is an
// error wrapping gguf.ErrKeyType; anything accepted plans every tensor.
func FuzzModelParams(f *testing.F) {
	f.Add([]byte{}, "deepseek2", int64(3), "3", uint8(0), uint8(1), int64(256))
	f.Add([]byte{1, 6}, "deepseek2", int64(3), "3", uint8(3), uint8(1), int64(256))       // str block_count (issue 16)
	f.Add([]byte{1, 2, 2, 8, 8}, "llama", int64(32), "x", uint8(5), uint8(2), int64(512)) // per-layer head counts
	f.Add([]byte{0}, "llama", int64(-1), "", uint8(7), uint8(2), int64(96))
	f.Add([]byte{1, 2, 2, 2, 2, 2, 2, 4, 9}, "qwen3moe", int64(1<<40), "a", uint8(11), uint8(3), int64(32))
	f.Add([]byte{1, 255, 255, 255, 255, 255, 255, 6, 6}, "", int64(0), "", uint8(0), uint8(0), int64(1))
	f.Fuzz(func(t *testing.T, spec []byte, arch string, n int64, s string, ft, layers uint8, ne0 int64) {
		md := fuzzMetadata(spec, arch, n, s)
		params, err := recipes.ModelParams(md)
		if err != nil {
			if !errors.Is(err, gguf.ErrKeyType) && params != (recipes.Model{}) {
				t.Fatalf("error %v with a model %+v", err, params)
			}
			return
		}
		if params.NLayer < 0 || params.NExpert < 0 || params.NHead < 0 || params.NVocab < 0 {
			t.Fatalf("negative counts %+v", params)
		}
		if ne0 < 1 || ne0 > 1024 {
			ne0 = 256
		}
		tensors := fuzzTensors(int(layers%4), ne0)
		rts := make([]gguf.TensorInfo, len(tensors))
		for i, ti := range tensors {
			rts[i] = gguf.TensorInfo{Name: ti.Name, Shape: ti.Shape, Type: ti.Type}
		}
		ftype, copyOnly, err := recipes.ParseFileType(fuzzFileTypes[int(ft)%len(fuzzFileTypes)])
		if err != nil {
			t.Fatal(err)
		}
		opts := recipes.Options{FileType: ftype, CopyOnly: copyOnly, IgnoreImatrixRules: true}
		if _, err := recipes.Select(opts, params, rts); err != nil {
			return
		}
		in, err := writeFuzzModel(t, t.TempDir(), md, tensors)
		if err != nil {
			return // a metadata the writer or reader refuses (an empty array of arrays ...)
		}
		defer in.Close()
		plan, err := Build(in, Config{Selection: opts, Output: filepath.Join(t.TempDir(), "out.gguf")})
		if err != nil {
			return
		}
		if len(plan.Sizes) != len(plan.Outputs) || plan.Total() <= 0 {
			t.Fatalf("plan with %d outputs, sizes %v", len(plan.Outputs), plan.Sizes)
		}
	})
}
