package recipes

// What the type choice needs to know about an architecture. The reference
// asks its per-architecture tensor-name table (LLM_TN) for the names of the
// output, position-embedding and token-type tensors; an architecture without
// an entry gets a name no tensor has.

// archsWithoutOutput are the architectures whose name table has no output
// tensor: for them token_embd.weight is treated as the (tied) output tensor.
// Unknown architectures behave the same way.
var archsWithoutOutput = map[string]bool{
	"gptj": true, "bert": true, "nomic-bert": true, "jina-bert-v2": true, "gemma": true,
	"gemma2": true, "command-r": true, "openelm": true, "bitnet": true, "cohere2": true,
	"gemma4_mtp": true, "gemma4-assistant": true,
}

// archsWithPosEmbd have a position_embd tensor, which is never quantized.
var archsWithPosEmbd = map[string]bool{"gpt2": true, "mpt": true, "starcoder": true, "bert": true}

// archsWithTokenTypes have a token_types tensor, which is never quantized.
var archsWithTokenTypes = map[string]bool{"bert": true, "nomic-bert": true, "jina-bert-v2": true}

// knownArchs are the architecture names the reference recognises; any other
// name loads as LLM_ARCH_UNKNOWN.
var knownArchs = map[string]bool{
	"llama": true, "llama4": true, "deci": true, "falcon": true, "grok": true, "gpt2": true,
	"gptj": true, "gptneox": true, "mpt": true, "baichuan": true, "starcoder": true, "refact": true,
	"bert": true, "nomic-bert": true, "jina-bert-v2": true, "bloom": true, "stablelm": true,
	"qwen": true, "qwen2": true, "qwen2moe": true, "qwen2vl": true, "qwen3": true, "qwen3moe": true,
	"qwen3next": true, "qwen3vl": true, "qwen3vlmoe": true, "qwen35moe": true, "qwen35": true,
	"mellum": true, "phi2": true, "phi3": true, "plamo": true, "codeshell": true, "orion": true,
	"internlm2": true, "minicpm": true, "gemma": true, "gemma2": true, "gemma3": true,
	"starcoder2": true, "mamba": true, "xverse": true, "command-r": true, "dbrx": true, "olmo": true,
	"openelm": true, "arctic": true, "deepseek2": true, "deepseek4": true, "chatglm": true,
	"glm4": true, "glm4moe": true, "bitnet": true, "bitnet-25": true, "bitnet-b1.58": true,
	"t5": true, "t5encoder": true, "jais": true, "granite": true, "granitemoe": true, "cohere2": true,
	"cohere2_moe": true, "dots1": true, "ernie4_5": true, "ernie4_5-moe": true, "hunyuan-moe": true,
	"gpt-oss": true, "bailingmoe2": true, "bailingmoe3": true, "minimax-m2": true, "minimax-m3": true,
	"smollm3": true, "mistral3": true, "mimo2": true, "seed_oss": true, "step35": true,
	"laguna": true, "glm-dsa": true, "mistral4": true, "gemma4": true, "gemma4_mtp": true,
	"dflash": true, "dflash-draft": true, "gemma4-assistant": true, "openpangu": true,
	"muse-glimmer": true,
}

// archOutputName is LLM_TN(arch)(LLM_TENSOR_OUTPUT, "weight").
func archOutputName(arch string) string {
	if archsWithoutOutput[arch] || !knownArchs[arch] {
		return "__missing__"
	}
	return "output.weight"
}

// ModelSize is the reference's model-size class; only the two classes the
// type choice tests for are distinguished.
type ModelSize int

const (
	SizeOther ModelSize = iota
	Size8B
	Size70B
)

func (s ModelSize) String() string {
	switch s {
	case Size8B:
		return "8B"
	case Size70B:
		return "70B"
	}
	return "other"
}

// GuessModelSize reproduces the reference's model-size classification
// (llm_load_hparams) for the architectures where it yields 8B or 70B.
// nHead and nHeadKV are the layer-0 head counts.
func GuessModelSize(arch string, nLayer, nVocab, nHead, nHeadKV, nExpert, nEmbd int) ModelSize {
	switch arch {
	case "llama":
		if nExpert == 8 {
			return SizeOther
		}
		switch nLayer {
		case 32:
			if nVocab != 49152 && nVocab >= 40000 {
				return Size8B
			}
		case 36:
			return Size8B
		case 80:
			if nHead != nHeadKV {
				return Size70B
			}
		}
	case "deci", "qwen2", "qwen2vl", "olmo":
		if nLayer == 80 {
			return Size70B
		}
	case "qwen3", "qwen3vl":
		if nLayer == 36 && nEmbd != 2560 {
			return Size8B
		}
	case "cohere2":
		if nLayer == 32 {
			return Size8B
		}
	case "mistral3":
		if nLayer == 34 {
			return Size8B
		}
	}
	return SizeOther
}
