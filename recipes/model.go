package recipes

import (
	"fmt"
	"math"

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
			m.NLayer, m.NVocab = 0, 0
		}
		if at <= stopExpertCount {
			m.NExpert = 0
		}
		if at <= stopHeadCount {
			m.NHead, m.NHeadKV = 0, 0
		}
		if at == stopHeadCountKV {
			m.NHeadKV = m.NHead
		}
	}
	return m, nil
}

// The keys llama-quantize's loader (llm_load_hparams) reads, in its order,
// up to the last one the type rules depend on.
const (
	stopBlockCount = iota
	stopContextLength
	stopEmbeddingLength
	stopExpertCount
	stopExpertUsedCount
	stopHeadCount
	stopHeadCountKV
	stopRMSEps // llama's attention.layer_norm_rms_epsilon, before its size class
)

// loaderStop finds where llama-quantize's loader stops reading this
// model's hyper-parameters: the first key, in the order it reads them, that
// it requires and is missing, or that is not of the type it wants (uint32,
// or per layer an array of them for the head counts; a float32 epsilon).
// llama-quantize catches that and picks the tensor types with everything
// after it 0, so ModelParams does too, and says why (why is "" when the
// loader reads them all).
func loaderStop(md gguf.Metadata, arch string) (at int, why string) {
	keys := []struct {
		key           string
		at            int
		required, arr bool
		typ           gguf.ValueType
	}{
		{"block_count", stopBlockCount, true, false, gguf.TypeUint32},
		{"context_length", stopContextLength, true, false, gguf.TypeUint32},
		{"embedding_length", stopEmbeddingLength, true, false, gguf.TypeUint32},
		{"expert_count", stopExpertCount, false, false, gguf.TypeUint32},
		{"expert_used_count", stopExpertUsedCount, false, false, gguf.TypeUint32},
		{"attention.head_count", stopHeadCount, false, true, gguf.TypeUint32},
		{"attention.head_count_kv", stopHeadCountKV, false, true, gguf.TypeUint32},
	}
	if arch == "llama" {
		keys = append(keys, struct {
			key           string
			at            int
			required, arr bool
			typ           gguf.ValueType
		}{"attention.layer_norm_rms_epsilon", stopRMSEps, true, false, gguf.TypeFloat32})
	}
	for _, k := range keys {
		name := arch + "." + k.key
		v, ok := md.Lookup(name)
		switch {
		case !ok && k.required:
			return k.at, fmt.Sprintf("the model has no %s, which llama-quantize's loader requires", name)
		case !ok:
		case v.Type() == k.typ, k.arr && v.Type() == gguf.TypeArray && v.ElemType() == k.typ:
		default:
			return k.at, fmt.Sprintf("%s is of type %s, where llama-quantize's loader wants %s", name, v.Type(), k.typ)
		}
		if k.at == stopHeadCountKV {
			if why := checkRot(md, arch); why != "" {
				// Read between the head counts and the epsilon.
				return stopRMSEps, why
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
