package recipes

import (
	"fmt"
	"math"
	"strings"

	"github.com/gquant/gquant/gguf"
)

// ModelParams reads the hyper-parameters the type choice needs from
// metadata. A key of the wrong type (a string block count, say) is an error
// naming the key, the type wanted and the type found; absent keys read as 0.
func ModelParams(md gguf.Metadata) (Model, error) {
	arch, _, err := md.LookupText("general.architecture")
	if err != nil {
		return Model{}, err
	}
	var firstErr error
	get := func(key string) int {
		// Per-layer arrays (some architectures): use layer 0.
		v, _, err := md.LookupIntOrFirst(arch+"."+key, 0)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if v < 0 || v > math.MaxInt32 {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s.%s is %d, out of range", arch, key, v)
			}
			return 0
		}
		return int(v)
	}
	m := Model{Arch: arch, NLayer: get("block_count"), NExpert: get("expert_count"),
		NHead: get("attention.head_count"), NHeadKV: get("attention.head_count_kv"), NVocab: get("vocab_size")}
	embd := get("embedding_length")
	if m.NHeadKV == 0 {
		m.NHeadKV = m.NHead
	}
	if m.NVocab == 0 {
		n, _, err := md.LookupArrayLen("tokenizer.ggml.tokens")
		if err != nil && firstErr == nil {
			firstErr = err
		}
		m.NVocab = n
	}
	ft, present, err := md.LookupUint("general.file_type")
	if err == nil && ft > math.MaxUint32 {
		err = fmt.Errorf("general.file_type is %d, out of range", ft)
	}
	if err != nil && firstErr == nil {
		firstErr = err
	}
	if present && err == nil {
		m.FileType = FileType(ft)
	}
	if firstErr != nil {
		return Model{}, firstErr
	}
	m.Size = GuessModelSize(arch, m.NLayer, m.NVocab, m.NHead, m.NHeadKV, m.NExpert, embd)
	if at, why := loaderStop(md, arch); why != "" {
		// llama-quantize goes on with what its loader read before the
		// stop; everything after it stays 0, and the model's size class,
		// set last, is unknown.
		m.LoaderStop = why
		m.Size = SizeOther
		if at <= stopBlockCount {
			m.NLayer = 0
		}
		if at <= stopVocab {
			m.NVocab = 0
		}
		if at <= stopExperts {
			m.NExpert = 0
		}
		if at <= stopHeads {
			m.NHead, m.NHeadKV = 0, 0
		}
		if at == stopHeadsKV {
			m.NHeadKV = m.NHead
		}
	}
	return m, nil
}

// Where llama-quantize's loader (llm_load_hparams) can stop, by what is
// still 0 for its type choice when it stops there.
const (
	stopBlockCount = iota // everything
	stopVocab             // the vocabulary size, experts, heads
	stopExperts           // the experts, heads
	stopHeads             // the heads
	stopHeadsKV           // the KV heads (they default to the heads)
	stopSize              // only the size class, set last
)

// loaderKey is a key llm_load_hparams reads: where a stop there leaves the
// type choice, whether it must be present, and the type it wants (per
// layer: that type, or an array of 32-bit integers or bools, one per
// layer).
type loaderKey struct {
	key      string // after "ARCH."; a "general." key as it is
	at       int
	required bool
	perLayer bool
	typ      gguf.ValueType
}

// loaderKeys are the keys llm_load_hparams reads for every architecture,
// in its order, up to the ones of the architecture itself.
var loaderKeys = []loaderKey{
	{"block_count", stopBlockCount, true, false, gguf.TypeUint32},
	{"general.name", stopVocab, false, false, gguf.TypeString},
	{"vocab_size", stopVocab, false, false, gguf.TypeUint32},
	{"context_length", stopExperts, true, false, gguf.TypeUint32},
	{"embedding_length", stopExperts, true, false, gguf.TypeUint32},
	{"embedding_length_out", stopExperts, false, false, gguf.TypeUint32},
	{"expert_count", stopExperts, false, false, gguf.TypeUint32},
	{"expert_used_count", stopHeads, false, false, gguf.TypeUint32},
	{"feed_forward_length", stopHeads, false, true, gguf.TypeUint32},
	{"attention.head_count", stopHeads, false, true, gguf.TypeUint32},
	{"attention.head_count_kv", stopHeadsKV, false, true, gguf.TypeUint32},
	{"rope.scaling.finetuned", stopSize, false, false, gguf.TypeBool},
	{"rope.scaling.original_context_length", stopSize, false, false, gguf.TypeUint32},
	{"rope.freq_base", stopSize, false, false, gguf.TypeFloat32},
	{"rope.scaling.type", stopSize, false, false, gguf.TypeString},
	{"rope.scaling.factor", stopSize, false, false, gguf.TypeFloat32},
	{"rope.scaling.attn_factor", stopSize, false, false, gguf.TypeFloat32},
	{"attention.key_length", stopSize, false, false, gguf.TypeUint32},
	{"attention.value_length", stopSize, false, false, gguf.TypeUint32},
	{"rope.dimension_count", stopSize, false, false, gguf.TypeUint32},
	{"attention.key_length_swa", stopSize, false, false, gguf.TypeUint32},
	{"attention.value_length_swa", stopSize, false, false, gguf.TypeUint32},
	{"rope.dimension_count_swa", stopSize, false, false, gguf.TypeUint32},
}

// archKeys are the first keys of the architectures whose size class the
// type choice uses (GuessModelSize), read before they set it.
var archKeys = map[string][]loaderKey{
	"llama":    {{"attention.layer_norm_rms_epsilon", stopSize, true, false, gguf.TypeFloat32}},
	"deci":     {{"attention.layer_norm_rms_epsilon", stopSize, true, false, gguf.TypeFloat32}},
	"qwen2":    {{"attention.layer_norm_rms_epsilon", stopSize, true, false, gguf.TypeFloat32}},
	"qwen2vl":  {{"rope.dimension_sections", stopSize, true, true, gguf.TypeInt32}, {"attention.layer_norm_rms_epsilon", stopSize, true, false, gguf.TypeFloat32}},
	"qwen3":    {{"pooling_type", stopSize, false, false, gguf.TypeUint32}, {"attention.layer_norm_rms_epsilon", stopSize, true, false, gguf.TypeFloat32}},
	"mistral3": {{"attention.layer_norm_rms_epsilon", stopSize, true, false, gguf.TypeFloat32}},
	"olmo":     {{"attention.layer_norm_epsilon", stopSize, true, false, gguf.TypeFloat32}},
	"cohere2":  {{"attention.sliding_window", stopSize, true, false, gguf.TypeUint32}, {"logit_scale", stopSize, true, false, gguf.TypeFloat32}},
}

// loaderStop finds where llama-quantize's loader stops reading this
// model's hyper-parameters: the first key, in the order it reads them, that
// it requires and is missing, or that is present with another type than it
// wants (its getters throw), or a per-layer array of another length than
// the layers, or a rope.dimension_count other than the key length where
// it checks that. llama-quantize catches that and picks the tensor types
// with everything after it 0, so ModelParams does too, and says why (why
// is "" when the loader reads them all).
func loaderStop(md gguf.Metadata, arch string) (at int, why string) {
	layers, _, _ := md.LookupInt(arch + ".block_count")
	keys := append(append([]loaderKey(nil), loaderKeys...), archKeys[arch]...)
	for _, k := range keys {
		name := arch + "." + k.key
		if strings.HasPrefix(k.key, "general.") {
			name = k.key
		}
		v, ok := md.Lookup(name)
		arrayOK := k.perLayer && v.Type() == gguf.TypeArray &&
			(v.ElemType() == gguf.TypeUint32 || v.ElemType() == gguf.TypeInt32 || v.ElemType() == gguf.TypeBool)
		switch {
		case !ok && k.required:
			return k.at, fmt.Sprintf("the model has no %s, which llama-quantize's loader requires", name)
		case !ok:
		case arrayOK && k.key != "rope.dimension_sections" && int64(v.Len()) != layers:
			return k.at, fmt.Sprintf("%s has %d values for %d layers, which llama-quantize's loader refuses", name, v.Len(), layers)
		case v.Type() == k.typ, arrayOK:
		default:
			return k.at, fmt.Sprintf("%s is of type %s, where llama-quantize's loader wants %s", name, v.Type(), k.typ)
		}
		if k.key == "rope.dimension_count" {
			if why := checkRot(md, arch); why != "" {
				return stopSize, why
			}
		}
	}
	return 0, ""
}

// checkRot is the loader's check of rope.dimension_count for the
// architectures it checks: with attention heads, it must be the key
// length (attention.key_length, else embedding_length / head_count).
func checkRot(md gguf.Metadata, arch string) string {
	switch arch {
	case "llama", "falcon", "bitnet-25", "bitnet-b1.58", "deci":
	default:
		return ""
	}
	head, _, _ := md.LookupIntOrFirst(arch+".attention.head_count", 0)
	embd, _, _ := md.LookupIntOrFirst(arch+".embedding_length", 0)
	if head <= 0 {
		return ""
	}
	k := uint32(embd / head)
	if v, ok, err := md.LookupUint(arch + ".attention.key_length"); ok && err == nil {
		k = uint32(v)
	}
	rot := k
	if v, ok, err := md.LookupUint(arch + ".rope.dimension_count"); ok && err == nil {
		rot = uint32(v)
	}
	if rot != k {
		return fmt.Sprintf("%s.rope.dimension_count is %d where llama-quantize's loader wants the key length %d (invalid n_rot)", arch, rot, k)
	}
	return ""
}
