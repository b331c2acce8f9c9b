// Package modelgen makes synthetic GGUF models with the true tensor names and
// shapes of real architectures: small ones with bf16 data for tests and
// benchmarks of the quantize pipeline, and header-only ones (data regions are
// sparse-file holes) of 1T-class models for the planner.
package modelgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// Model is a model's metadata and tensor list, in file order.
type Model struct {
	Metadata gguf.Metadata
	Tensors  []gguf.TensorInfo
}

// DeepSeek2 describes a deepseek2-architecture model (DeepSeek-V2/V3/R1,
// Kimi-K2): MLA attention, leading dense layers, then MoE layers with shared
// experts.
type DeepSeek2 struct {
	Name          string
	Layers        int
	DenseLayers   int // leading_dense_block_count
	Embd          int
	FF            int // dense feed-forward length
	ExpertFF      int
	Experts       int
	ExpertsUsed   int
	SharedExperts int
	Heads         int
	QLoraRank     int // 0: attn_q instead of attn_q_a/attn_q_b
	KVLoraRank    int
	KeyLength     int // qk_nope + qk_rope per head
	ValueLength   int
	RopeDim       int
	Vocab         int
	SplitKVB      bool // attn_k_b / attn_v_b (MLA split) instead of attn_kv_b
	ExpProbsB     bool // the exp_probs_b bias (V3 and later)
	Tokenizer     bool // include a tokenizer vocabulary of Vocab strings
}

// Presets of real and test-sized models.
var (
	// DeepSeekR1 is the layout most published DeepSeek-R1/V3 GGUFs have: 61
	// layers (3 dense), 256 routed experts and one shared, no MTP layer and
	// attn_kv_b unsplit: 1025 tensors, 361 of them f32.
	DeepSeekR1 = DeepSeek2{Name: "DeepSeek-R1", Layers: 61, DenseLayers: 3, Embd: 7168, FF: 18432, ExpertFF: 2048,
		Experts: 256, ExpertsUsed: 8, SharedExperts: 1, Heads: 128, QLoraRank: 1536, KVLoraRank: 512,
		KeyLength: 192, ValueLength: 128, RopeDim: 64, Vocab: 129280, ExpProbsB: true, Tokenizer: true}
	// KimiK2 is Kimi-K2: the DeepSeek-V3 layout with 384 experts, 64 heads and one dense layer.
	KimiK2 = DeepSeek2{Name: "Kimi-K2", Layers: 61, DenseLayers: 1, Embd: 7168, FF: 18432, ExpertFF: 2048,
		Experts: 384, ExpertsUsed: 8, SharedExperts: 1, Heads: 64, QLoraRank: 1536, KVLoraRank: 512,
		KeyLength: 192, ValueLength: 128, RopeDim: 64, Vocab: 163840, ExpProbsB: true, Tokenizer: true}
	// TinyDeepSeek2 is a few-MB model of the same shape family, for tests.
	TinyDeepSeek2 = DeepSeek2{Name: "gquant-tiny-deepseek2", Layers: 3, DenseLayers: 1, Embd: 256, FF: 512, ExpertFF: 256,
		Experts: 4, ExpertsUsed: 2, SharedExperts: 1, Heads: 2, QLoraRank: 256, KVLoraRank: 256,
		KeyLength: 192, ValueLength: 128, RopeDim: 64, Vocab: 512, SplitKVB: true, ExpProbsB: true}
)

// MoE describes a llama-family model with optional routed experts (llama,
// qwen3moe).
type MoE struct {
	Name        string
	Arch        string // "llama" or "qwen3moe"
	Layers      int
	Embd        int
	FF          int // dense FF, or expert FF when Experts > 0
	Experts     int
	ExpertsUsed int
	Heads       int
	KVHeads     int
	HeadDim     int
	Vocab       int
	QKNorm      bool // attn_q_norm / attn_k_norm (qwen3)
	Tokenizer   bool
}

var (
	// Qwen3MoE235B is Qwen3-235B-A22B.
	Qwen3MoE235B = MoE{Name: "Qwen3-235B-A22B", Arch: "qwen3moe", Layers: 94, Embd: 4096, FF: 1536, Experts: 128,
		ExpertsUsed: 8, Heads: 64, KVHeads: 4, HeadDim: 128, Vocab: 151936, QKNorm: true, Tokenizer: true}
	// TinyLlama is a small dense llama model for tests.
	TinyLlama = MoE{Name: "gquant-tiny-llama", Arch: "llama", Layers: 2, Embd: 256, FF: 512, Heads: 4, KVHeads: 2,
		HeadDim: 64, Vocab: 512}
)

func u32(v int) gguf.Value { return gguf.Uint32Value(uint32(v)) }

func tokenizer(md *gguf.Metadata, model string, vocab int) {
	md.Set("tokenizer.ggml.model", gguf.StringValue(model))
	toks := make([]string, vocab)
	types := make([]int32, vocab)
	for i := range toks {
		toks[i] = fmt.Sprintf("<tok%d>", i)
		types[i] = 1
	}
	md.Set("tokenizer.ggml.tokens", gguf.ArrayValue(toks))
	md.Set("tokenizer.ggml.token_type", gguf.ArrayValue(types))
	md.Set("tokenizer.ggml.bos_token_id", u32(0))
	md.Set("tokenizer.ggml.eos_token_id", u32(1))
}

func tensor(name string, t formats.Type, shape ...int64) gguf.TensorInfo {
	return gguf.TensorInfo{Name: name, Type: t, Shape: shape}
}

// Model returns the metadata and tensors of c, weights in bf16 and norms,
// gates and biases in f32, in the order convert_hf_to_gguf writes them.
func (c DeepSeek2) Model() Model {
	var md gguf.Metadata
	a := "deepseek2."
	md.Set("general.architecture", gguf.StringValue("deepseek2"))
	md.Set("general.name", gguf.StringValue(c.Name))
	md.Set("general.file_type", u32(32)) // MOSTLY_BF16
	md.Set(a+"block_count", u32(c.Layers))
	md.Set(a+"context_length", u32(4096))
	md.Set(a+"embedding_length", u32(c.Embd))
	md.Set(a+"feed_forward_length", u32(c.FF))
	md.Set(a+"attention.head_count", u32(c.Heads))
	md.Set(a+"attention.head_count_kv", u32(c.Heads))
	md.Set(a+"attention.key_length", u32(c.KeyLength))
	md.Set(a+"attention.value_length", u32(c.ValueLength))
	md.Set(a+"rope.freq_base", gguf.Float32Value(10000))
	md.Set(a+"rope.dimension_count", u32(c.RopeDim))
	md.Set(a+"attention.layer_norm_rms_epsilon", gguf.Float32Value(1e-6))
	md.Set(a+"leading_dense_block_count", u32(c.DenseLayers))
	if c.QLoraRank > 0 {
		md.Set(a+"attention.q_lora_rank", u32(c.QLoraRank))
	}
	md.Set(a+"attention.kv_lora_rank", u32(c.KVLoraRank))
	md.Set(a+"expert_feed_forward_length", u32(c.ExpertFF))
	md.Set(a+"expert_count", u32(c.Experts))
	md.Set(a+"expert_used_count", u32(c.ExpertsUsed))
	md.Set(a+"expert_shared_count", u32(c.SharedExperts))
	md.Set(a+"expert_weights_scale", gguf.Float32Value(2.5))
	md.Set(a+"expert_weights_norm", gguf.BoolValue(true))
	md.Set(a+"expert_gating_func", u32(2))
	md.Set(a+"vocab_size", u32(c.Vocab))
	if c.Tokenizer {
		tokenizer(&md, "gpt2", c.Vocab)
	}
	md.Set("general.quantization_version", u32(2))

	E, BF, F := int64(c.Embd), formats.BF16, formats.F32
	qk, v := int64(c.KeyLength), int64(c.ValueLength)
	nope := qk - int64(c.RopeDim)
	H := int64(c.Heads)
	ts := []gguf.TensorInfo{tensor("token_embd.weight", BF, E, int64(c.Vocab))}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts, tensor(p+"attn_norm.weight", F, E))
		if c.QLoraRank > 0 {
			ts = append(ts, tensor(p+"attn_q_a_norm.weight", F, int64(c.QLoraRank)))
		}
		ts = append(ts, tensor(p+"attn_kv_a_norm.weight", F, int64(c.KVLoraRank)))
		if c.QLoraRank > 0 {
			ts = append(ts, tensor(p+"attn_q_a.weight", BF, E, int64(c.QLoraRank)),
				tensor(p+"attn_q_b.weight", BF, int64(c.QLoraRank), H*qk))
		} else {
			ts = append(ts, tensor(p+"attn_q.weight", BF, E, H*qk))
		}
		ts = append(ts, tensor(p+"attn_kv_a_mqa.weight", BF, E, int64(c.KVLoraRank+c.RopeDim)),
			tensor(p+"attn_kv_b.weight", BF, int64(c.KVLoraRank), H*(nope+v)))
		if c.SplitKVB {
			ts = append(ts, tensor(p+"attn_k_b.weight", BF, nope, int64(c.KVLoraRank), H),
				tensor(p+"attn_v_b.weight", BF, int64(c.KVLoraRank), v, H))
		}
		ts = append(ts, tensor(p+"attn_output.weight", BF, H*v, E),
			tensor(p+"ffn_norm.weight", F, E))
		if l < c.DenseLayers {
			ts = append(ts, tensor(p+"ffn_gate.weight", BF, E, int64(c.FF)),
				tensor(p+"ffn_up.weight", BF, E, int64(c.FF)),
				tensor(p+"ffn_down.weight", BF, int64(c.FF), E))
			continue
		}
		X, EF := int64(c.Experts), int64(c.ExpertFF)
		ts = append(ts, tensor(p+"ffn_gate_inp.weight", F, E, X))
		if c.ExpProbsB {
			ts = append(ts, tensor(p+"exp_probs_b.bias", F, X))
		}
		ts = append(ts, tensor(p+"ffn_gate_exps.weight", BF, E, EF, X),
			tensor(p+"ffn_up_exps.weight", BF, E, EF, X),
			tensor(p+"ffn_down_exps.weight", BF, EF, E, X))
		if c.SharedExperts > 0 {
			S := EF * int64(c.SharedExperts)
			ts = append(ts, tensor(p+"ffn_gate_shexp.weight", BF, E, S),
				tensor(p+"ffn_up_shexp.weight", BF, E, S),
				tensor(p+"ffn_down_shexp.weight", BF, S, E))
		}
	}
	ts = append(ts, tensor("output_norm.weight", F, E), tensor("output.weight", BF, E, int64(c.Vocab)))
	return Model{Metadata: md, Tensors: ts}
}

// Model returns the metadata and tensors of c.
func (c MoE) Model() Model {
	var md gguf.Metadata
	a := c.Arch + "."
	md.Set("general.architecture", gguf.StringValue(c.Arch))
	md.Set("general.name", gguf.StringValue(c.Name))
	md.Set("general.file_type", u32(32))
	md.Set(a+"block_count", u32(c.Layers))
	md.Set(a+"context_length", u32(4096))
	md.Set(a+"embedding_length", u32(c.Embd))
	md.Set(a+"attention.head_count", u32(c.Heads))
	md.Set(a+"attention.head_count_kv", u32(c.KVHeads))
	md.Set(a+"attention.key_length", u32(c.HeadDim))
	md.Set(a+"attention.value_length", u32(c.HeadDim))
	md.Set(a+"rope.freq_base", gguf.Float32Value(1e6))
	md.Set(a+"attention.layer_norm_rms_epsilon", gguf.Float32Value(1e-6))
	if c.Experts > 0 {
		md.Set(a+"expert_feed_forward_length", u32(c.FF))
		md.Set(a+"expert_count", u32(c.Experts))
		md.Set(a+"expert_used_count", u32(c.ExpertsUsed))
	} else {
		md.Set(a+"feed_forward_length", u32(c.FF))
	}
	md.Set(a+"vocab_size", u32(c.Vocab))
	if c.Tokenizer {
		tokenizer(&md, "gpt2", c.Vocab)
	}
	md.Set("general.quantization_version", u32(2))

	E, BF, F := int64(c.Embd), formats.BF16, formats.F32
	HD := int64(c.HeadDim)
	ts := []gguf.TensorInfo{tensor("token_embd.weight", BF, E, int64(c.Vocab))}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts, tensor(p+"attn_norm.weight", F, E),
			tensor(p+"attn_q.weight", BF, E, int64(c.Heads)*HD),
			tensor(p+"attn_k.weight", BF, E, int64(c.KVHeads)*HD),
			tensor(p+"attn_v.weight", BF, E, int64(c.KVHeads)*HD),
			tensor(p+"attn_output.weight", BF, int64(c.Heads)*HD, E))
		if c.QKNorm {
			ts = append(ts, tensor(p+"attn_q_norm.weight", F, HD), tensor(p+"attn_k_norm.weight", F, HD))
		}
		ts = append(ts, tensor(p+"ffn_norm.weight", F, E))
		FF := int64(c.FF)
		if c.Experts > 0 {
			X := int64(c.Experts)
			ts = append(ts, tensor(p+"ffn_gate_inp.weight", F, E, X),
				tensor(p+"ffn_gate_exps.weight", BF, E, FF, X),
				tensor(p+"ffn_up_exps.weight", BF, E, FF, X),
				tensor(p+"ffn_down_exps.weight", BF, FF, E, X))
		} else {
			ts = append(ts, tensor(p+"ffn_gate.weight", BF, E, FF),
				tensor(p+"ffn_up.weight", BF, E, FF),
				tensor(p+"ffn_down.weight", BF, FF, E))
		}
	}
	ts = append(ts, tensor("output_norm.weight", F, E), tensor("output.weight", BF, E, int64(c.Vocab)))
	return Model{Metadata: md, Tensors: ts}
}

// Preset returns a named model: deepseek-r1, kimi-k2, qwen3-235b, tiny-deepseek2, tiny-llama.
func Preset(name string) (Model, error) {
	switch strings.ToLower(name) {
	case "deepseek-r1", "deepseek-v3":
		return DeepSeekR1.Model(), nil
	case "kimi-k2":
		return KimiK2.Model(), nil
	case "qwen3-235b", "qwen3-235b-a22b":
		return Qwen3MoE235B.Model(), nil
	case "tiny-deepseek2":
		return TinyDeepSeek2.Model(), nil
	case "tiny-llama":
		return TinyLlama.Model(), nil
	}
	return Model{}, fmt.Errorf("modelgen: unknown preset %q (have deepseek-r1, kimi-k2, qwen3-235b, tiny-deepseek2, tiny-llama)", name)
}

// WriteOptions adjusts Write.
type WriteOptions struct {
	// HeaderOnly leaves every data region a hole in a sparse file: the file
	// has its full size and a valid header but its tensors read as zeros.
	HeaderOnly bool
	// Seed makes the weights reproducible.
	Seed uint64
	// Replace lets the file replace one at its path (--force); without it
	// a file there is never replaced (gguf.CreateOptions.NoReplace).
	Replace bool
}

// Write writes m to path. Weights are normal with sigma 0.02 and a few
// outlier columns, rounded to the tensor's type; norms are near 1.
func Write(path string, m Model, opt WriteOptions) error {
	w, err := gguf.Create(path, m.Metadata, m.Tensors, &gguf.CreateOptions{NoReplace: !opt.Replace})
	if err != nil {
		return err
	}
	if opt.HeaderOnly {
		return writeSparse(w)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	for _, t := range w.Tensors() {
		if err := writeTensor(w, t, rng); err != nil {
			w.Abort()
			return fmt.Errorf("modelgen: %s: %w", t.Name, err)
		}
	}
	return w.Close()
}

func writeSparse(w *gguf.Writer) error {
	if err := w.SkipRemaining(); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

func writeTensor(w *gguf.Writer, t gguf.TensorInfo, rng *rand.Rand) error {
	ne0 := int(t.Shape[0])
	rows := int(t.Elements()) / max(ne0, 1)
	norm := strings.HasSuffix(t.Name, "_norm.weight")
	row := make([]float32, ne0)
	var buf []byte
	outlier := rng.IntN(max(ne0, 1))
	for r := 0; r < rows; r++ {
		for i := range row {
			v := float32(rng.NormFloat64() * 0.02)
			if norm {
				v = 1 + v
			} else if i == outlier {
				v *= 20
			}
			row[i] = v
		}
		buf = buf[:0]
		switch t.Type {
		case formats.F32:
			for _, v := range row {
				b := math.Float32bits(v)
				buf = append(buf, byte(b), byte(b>>8), byte(b>>16), byte(b>>24))
			}
		case formats.BF16:
			for _, v := range row {
				h := formats.FP32ToBF16(v)
				buf = append(buf, byte(h), byte(h>>8))
			}
		case formats.F16:
			for _, v := range row {
				h := formats.FP32ToFP16(v)
				buf = append(buf, byte(h), byte(h>>8))
			}
		default:
			return fmt.Errorf("cannot generate data of type %s", t.Type)
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile is Write followed by a check that path reads back as m.
func WriteFile(path string, m Model, opt WriteOptions) error {
	if err := Write(path, m, opt); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	g, err := gguf.Read(f, st.Size())
	if err != nil {
		return fmt.Errorf("modelgen: %s does not read back: %w", path, err)
	}
	if len(g.Tensors) != len(m.Tensors) {
		return fmt.Errorf("modelgen: %s reads back %d tensors, wrote %d", path, len(g.Tensors), len(m.Tensors))
	}
	return nil
}
