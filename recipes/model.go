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
	return m, nil
}
