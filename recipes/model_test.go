package recipes

import (
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
)

// Where llama-quantize's loader stops reading a model's hyper-parameters (a
// required key missing, a key of another type), it picks the types with the
// rest 0; ModelParams reads the same values, so the types agree (checked
// against llama-quantize on models missing each key: Q4_K_M and Q3_K_M
// outputs the same).
func TestModelParamsLoaderStop(t *testing.T) {
	base := func() gguf.Metadata {
		return gguf.Metadata{
			{Key: "general.architecture", Value: gguf.StringValue("llama")},
			{Key: "llama.block_count", Value: gguf.Uint32Value(80)},
			{Key: "llama.context_length", Value: gguf.Uint32Value(4096)},
			{Key: "llama.embedding_length", Value: gguf.Uint32Value(256)},
			{Key: "llama.expert_count", Value: gguf.Uint32Value(8)},
			{Key: "llama.expert_used_count", Value: gguf.Uint32Value(2)},
			{Key: "llama.attention.head_count", Value: gguf.Uint32Value(32)},
			{Key: "llama.attention.head_count_kv", Value: gguf.Uint32Value(8)},
			{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32Value(1e-5)},
		}
	}
	without := func(key string) gguf.Metadata {
		md := base()
		md.Delete(key)
		return md
	}
	with := func(key string, v gguf.Value) gguf.Metadata {
		md := base()
		md.Set(key, v)
		return md
	}
	for _, tc := range []struct {
		name                    string
		md                      gguf.Metadata
		layers, experts, h, hkv int
		stop                    string
	}{
		{"whole", base(), 80, 8, 32, 8, ""},
		{"no context_length", without("llama.context_length"), 80, 0, 0, 0, "no llama.context_length"},
		{"no embedding_length", without("llama.embedding_length"), 80, 0, 0, 0, "no llama.embedding_length"},
		{"expert_count i32", with("llama.expert_count", gguf.Int32Value(8)), 80, 0, 0, 0, "llama.expert_count is of type i32"},
		{"expert_used_count i32", with("llama.expert_used_count", gguf.Int32Value(2)), 80, 8, 0, 0, "expert_used_count"},
		{"no rms epsilon", without("llama.attention.layer_norm_rms_epsilon"), 80, 8, 32, 8, "no llama.attention.layer_norm_rms_epsilon"},
		{"invalid n_rot", with("llama.rope.dimension_count", gguf.Uint32Value(16)), 80, 8, 32, 8, "invalid n_rot"},
		{"no expert_count", without("llama.expert_count"), 80, 0, 32, 8, ""},
		// Per-layer head counts as gguf-py writes them (int32 arrays).
		{"head_count_kv i32 array", with("llama.attention.head_count_kv", gguf.ArrayValue(int32s(80, 8))), 80, 8, 32, 8, ""},
		{"head_count_kv of 79 layers", with("llama.attention.head_count_kv", gguf.ArrayValue(int32s(79, 8))), 80, 8, 32, 32, "79 values for 80 layers"},
		{"general.name u32", with("general.name", gguf.Uint32Value(5)), 80, 0, 0, 0, "general.name is of type u32"},
		{"feed_forward_length i32", with("llama.feed_forward_length", gguf.Int32Value(512)), 80, 8, 0, 0, "feed_forward_length"},
		{"rope.freq_base u32", with("llama.rope.freq_base", gguf.Uint32Value(10000)), 80, 8, 32, 8, "rope.freq_base"},
	} {
		m, err := ModelParams(tc.md)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if m.NLayer != tc.layers || m.NExpert != tc.experts || m.NHead != tc.h || m.NHeadKV != tc.hkv ||
			(tc.stop == "") != (m.LoaderStop == "") || !strings.Contains(m.LoaderStop, tc.stop) {
			t.Errorf("%s: layers %d experts %d heads %d/%d stop %q; want %d %d %d/%d %q", tc.name,
				m.NLayer, m.NExpert, m.NHead, m.NHeadKV, m.LoaderStop, tc.layers, tc.experts, tc.h, tc.hkv, tc.stop)
		}
		if tc.stop != "" && m.Size != SizeOther {
			t.Errorf("%s: size class %v, want unknown", tc.name, m.Size)
		}
	}
}

func int32s(n int, v int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = v
	}
	return out
}
