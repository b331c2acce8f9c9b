package recipes

import (
	"fmt"
	"strings"

	"github.com/gquant/gquant/formats"
)

// This file ports the reference's per-tensor type choice
// (llama_tensor_get_type, change_type_if_necessary, interleaved_properties
// in src/llama-quantize.cpp). The branch order and the substring tests on the
// tensor name are the reference's: "attn_k" also matches attn_kv_b and
// attn_k_b, "ffn_gate" also matches ffn_gate_exps, and so on.

const qkK = 256 // super-block size of the k-quants and most iqk types
const qkBN = 64 // block size of the Bitnet types

// state carries what the reference keeps in quantize_state_internal: the
// counters that make the choice depend on the order of the tensors.
type state struct {
	model  Model
	opts   *Options
	ftype  FileType
	output string // the architecture's output tensor name

	nAttentionWV, nFFNDown, nFFNGate, nFFNUp int
	iAttentionWV, iFFNDown, iFFNGate, iFFNUp int
	nFallback                                int
	hasImatrix, hasOutput                    bool
}

func (qs *state) nGQA() int {
	if qs.model.NHeadKV == 0 {
		return 0
	}
	return qs.model.NHead / qs.model.NHeadKV
}

func useMoreBits(iLayer, nLayers int) bool {
	return iLayer < nLayers/8 || iLayer >= 7*nLayers/8 || (iLayer-nLayers/8)%3 == 2
}

// layerInfo returns the layer index used by the ffn rules: the running
// counter for dense models, the number in "blk.N." for models with experts
// (whose tensors need not be in layer order).
func (qs *state) layerInfo(counter, nLayer int, name string) (int, int, error) {
	nExpert := max(1, qs.model.NExpert)
	if nExpert > 1 {
		il, ok := scanBlockIndex(name)
		if !ok {
			return 0, 0, fmt.Errorf("recipes: failed to determine layer for tensor %s", name)
		}
		if il < 0 || il >= nLayer {
			return 0, 0, fmt.Errorf("recipes: bad layer %d for tensor %s: must be in [0, %d)", il, name, nLayer)
		}
		return il, nLayer, nil
	}
	return counter, nLayer, nil
}

// scanBlockIndex is sscanf(name, "blk.%d.", &il) == 1: white space and a sign
// are allowed before the digits, nothing is required after them.
func scanBlockIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return 0, false
	}
	n, ok := stoi(rest)
	if !ok {
		return 0, false
	}
	return int(n), true
}

func isAny(ft FileType, set ...FileType) bool {
	for _, f := range set {
		if ft == f {
			return true
		}
	}
	return false
}

func typeIsAny(t formats.Type, set ...formats.Type) bool {
	for _, s := range set {
		if t == s {
			return true
		}
	}
	return false
}

// builtinResult is what the built-in choice decided and why.
type builtinResult struct {
	typ      formats.Type
	branch   string // which of the reference's rules handled the tensor ("" if none)
	override string // the --*-type option that decided inside the rules, if any
}

// builtinType is llama_tensor_get_type without the custom rules and the
// fallbacks: the mixture the file type asks for.
func (qs *state) builtinType(newType formats.Type, name string, ne [4]int64) (builtinResult, error) {
	ft := qs.ftype
	m := qs.model
	o := &qs.opts.Overrides
	res := builtinResult{typ: newType}
	set := func(t formats.Type) { res.typ = t; newType = t }
	useOverride := func(flag string, t *formats.Type) bool {
		if t == nil {
			return false
		}
		set(*t)
		res.override = flag
		return true
	}
	contains := func(s string) bool { return strings.Contains(name, s) }

	switch {
	case name == qs.output || (!qs.hasOutput && name == "token_embd.weight"):
		res.branch = "output tensor"
		if useOverride("--output-tensor-type", o.Output) {
			break
		}
		nx := ne[0]
		switch {
		case m.Arch == "falcon" || nx%qkK != 0:
			set(formats.Q8_0)
		case isAny(ft, FileTypeIQ2_XXS, FileTypeIQ2_XS, FileTypeIQ3_XXS, FileTypeIQ1_S, FileTypeIQ2_S, FileTypeIQ2_M,
			FileTypeIQ1_M, FileTypeIQ2_K, FileTypeIQ3_K, FileTypeIQ2_KS, FileTypeIQ3_K_R4, FileTypeIQ3_KS,
			FileTypeIQ2_K_R4, FileTypeIQ3_XXS_R4, FileTypeIQ2_KL, FileTypeIQ2_M_R4, FileTypeIQ1_S_R4,
			FileTypeIQ1_M_R4, FileTypeIQ2_KT, FileTypeIQ3_KT, FileTypeIQ1_KT):
			if !qs.hasOutput {
				set(formats.IQ4_K)
			} else {
				set(formats.Q5_K)
			}
		case isAny(ft, FileTypeIQ2_XXS_R4, FileTypeIQ2_XS_R4):
			if !qs.hasOutput {
				set(formats.IQ4_K_R4)
			} else {
				set(formats.Q5_K_R4)
			}
		case isAny(ft, FileTypeIQ3_S, FileTypeIQ3_M, FileTypeIQ3_KL, FileTypeIQ4_XS, FileTypeIQ3_S_R4,
			FileTypeIQ4_KS, FileTypeIQ4_KSS, FileTypeIQ4_KS_R4) && !qs.hasOutput:
			set(formats.IQ5_K)
		case !typeIsAny(newType, formats.Q8_0, formats.Q8_0_R8, formats.IQ6_K, formats.Q6_K_R4,
			formats.Q8_K_R8, formats.Q8_KV, formats.Q8_KV_R8):
			set(formats.Q6_K)
		}

	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		res.branch = "token embeddings"
		flag, ov := "--token-embedding-type", o.TokenEmbedding
		if name == "per_layer_token_embd.weight" {
			res.branch = "per-layer token embeddings"
			flag, ov = "--per-layer-token-embedding-type", o.PerLayerTokenEmbedding
		}
		if useOverride(flag, ov) {
			break
		}
		switch {
		case isAny(ft, FileTypeIQ2_XXS, FileTypeIQ2_XS, FileTypeIQ1_S, FileTypeIQ1_M, FileTypeIQ2_XXS_R4,
			FileTypeIQ2_XS_R4, FileTypeIQ1_S_R4, FileTypeIQ1_M_R4):
			set(formats.Q2_K)
		case isAny(ft, FileTypeIQ2_S, FileTypeIQ2_M, FileTypeIQ2_M_R4):
			set(formats.IQ3_S)
		case isAny(ft, FileTypeIQ3_XXS, FileTypeIQ3_KT):
			set(formats.IQ3_S)
		case ft == FileTypeIQ3_XXS_R4:
			set(formats.IQ3_K)
		case isAny(ft, FileTypeIQ1_BN, FileTypeIQ2_BN, FileTypeIQ2_BN_R4):
			set(formats.IQ4_NL)
		}

	case isAny(ft, FileTypeIQ1_S_R4, FileTypeIQ1_M_R4):
		res.branch = "IQ1_S_R4/IQ1_M_R4 mixture"
		switch {
		case contains("attn_v.weight"):
			switch {
			case m.NExpert >= 4 || qs.nGQA() >= 4:
				set(formats.IQ4_K_R4)
			case qs.nGQA() >= 2:
				set(formats.IQ3_K_R4)
			default:
				set(formats.Q2_K_R4)
			}
			qs.iAttentionWV++
		case m.NExpert >= 8 && contains("attn_k"):
			set(formats.Q4_K_R4)
		case m.NExpert >= 8 && (contains("blk.0.ffn_down") || contains("blk.0.ffn_gate") || contains("blk.0.ffn_up")):
			set(formats.IQ3_K_R4)
		case m.NExpert >= 8 && contains("attn_q"):
			set(formats.Q4_K_R4)
		case contains("attn_qkv.weight"):
			set(formats.IQ2_K_R4)
		case contains("_shexp.weight"):
			set(formats.IQ4_K_R4)
		case contains("ffn_down"):
			il, nl, err := qs.layerInfo(qs.iFFNDown, qs.nFFNDown, name)
			if err != nil {
				return res, err
			}
			if !useOverride("--ffn-down-type", o.FFNDown) && il < nl/8 {
				set(formats.Q2_K_R4)
			}
			qs.iFFNDown++
		case contains("attn_output.weight"):
			if m.NExpert >= 4 {
				set(formats.Q5_K_R4)
			} else {
				set(formats.IQ2_K_R4)
			}
		}

	case ft == FileTypeIQ2_KT:
		res.branch = "IQ2_KT mixture"
		switch {
		case contains("attn_v.weight"):
			switch {
			case m.NExpert >= 4 || qs.nGQA() >= 4:
				set(formats.IQ4_K)
			case qs.nGQA() >= 2:
				set(formats.IQ3_K)
			default:
				set(formats.Q2_K)
			}
			qs.iAttentionWV++
		case m.NExpert >= 8 && contains("attn_k"):
			set(formats.Q4_K)
		case m.NExpert >= 8 && (contains("blk.0.ffn_down") || contains("blk.0.ffn_gate") || contains("blk.0.ffn_up")):
			set(formats.IQ3_K)
		case m.NExpert >= 8 && contains("attn_q"):
			set(formats.Q4_K)
		case contains("attn_qkv.weight"):
			set(formats.IQ3_K)
		case contains("_shexp.weight"):
			set(formats.IQ4_K)
		case contains("ffn_down"):
			il, nl, err := qs.layerInfo(qs.iFFNDown, qs.nFFNDown, name)
			if err != nil {
				return res, err
			}
			if !useOverride("--ffn-down-type", o.FFNDown) && il < nl/8 {
				set(formats.IQ3_K)
			}
			qs.iFFNDown++
		case contains("attn_output.weight"):
			if m.NExpert >= 4 {
				set(formats.Q5_K)
			} else {
				set(formats.IQ3_K)
			}
		}

	case isAny(ft, FileTypeIQ2_XXS, FileTypeIQ2_XS, FileTypeIQ1_S, FileTypeIQ2_S, FileTypeIQ2_M, FileTypeIQ1_M,
		FileTypeIQ2_KS, FileTypeIQ2_XXS_R4, FileTypeIQ2_XS_R4, FileTypeIQ2_M_R4):
		res.branch = "very-low-bit mixture"
		isIQ2M := isAny(ft, FileTypeIQ2_M, FileTypeIQ2_M_R4)
		iq2sOrM := ft == FileTypeIQ2_S || isIQ2M
		switch {
		case contains("attn_v.weight"):
			switch {
			case qs.nGQA() >= 4 || m.NExpert >= 4:
				set(formats.IQ4_K)
			case qs.nGQA() >= 2 || m.NExpert >= 2:
				set(formats.IQ3_K)
			case iq2sOrM:
				set(formats.IQ3_S)
			default:
				set(formats.Q2_K)
			}
			qs.iAttentionWV++
		case m.NExpert >= 8 && contains("attn_k"):
			set(formats.Q4_K)
		case m.NExpert >= 8 && contains("attn_q"):
			set(formats.Q4_K)
		case contains("attn_qkv.weight"):
			if iq2sOrM {
				set(formats.IQ3_XXS)
			} else {
				set(formats.IQ2_K)
			}
		case contains("ffn_down"):
			if qs.iFFNDown < qs.nFFNDown/8 {
				if iq2sOrM {
					set(formats.IQ3_S)
				} else {
					set(formats.Q2_K)
				}
			}
			qs.iFFNDown++
		case contains("attn_output.weight"):
			switch {
			case useOverride("--attn-output-type", o.AttnOutput):
			case m.NExpert >= 4:
				set(formats.Q5_K)
			case isAny(ft, FileTypeIQ1_S, FileTypeIQ1_M):
				set(formats.IQ2_K)
			case iq2sOrM:
				set(formats.IQ3_S)
			}
		}

	case contains("attn_v.weight"):
		res.branch = "attn_v"
		qs.attnV(set, useOverride, newType)
		qs.iAttentionWV++

	case contains("attn_k"):
		res.branch = "attn_k"
		switch {
		case useOverride("--attn-k-type", o.AttnK):
		case m.NExpert >= 4:
			set(formats.Q8_0)
		case ft == FileTypeIQ3_XS:
			set(formats.IQ3_XXS)
		case isAny(ft, FileTypeIQ3_XXS, FileTypeIQ3_XXS_R4):
			set(formats.IQ2_S)
		}

	case contains("attn_q"):
		res.branch = "attn_q"
		bigVocab := m.NVocab >= 127999 && (m.Size == Size8B || m.Size == Size70B)
		switch {
		case useOverride("--attn-q-type", o.AttnQ):
		case ft == FileTypeIQ3_XS:
			set(formats.IQ3_XXS)
		case isAny(ft, FileTypeIQ3_XXS, FileTypeIQ3_XXS_R4):
			set(formats.IQ2_S)
		case ft == FileTypeQ5_K_S:
			if bigVocab {
				set(formats.Q4_K)
			}
		case ft == FileTypeIQ5_K:
			if bigVocab {
				set(formats.IQ4_K)
			}
		case ft == FileTypeIQ5_KS:
			if bigVocab {
				set(formats.IQ4_KS)
			}
		}

	case contains("ffn_down"):
		res.branch = "ffn_down"
		il, nl, err := qs.layerInfo(qs.iFFNDown, qs.nFFNDown, name)
		if err != nil {
			return res, err
		}
		qs.ffnDown(il, nl, set, useOverride)
		qs.iFFNDown++

	case contains("attn_output.weight"):
		res.branch = "attn_output"
		qs.attnOutput(set, useOverride)

	case contains("attn_qkv.weight"):
		res.branch = "attn_qkv"
		switch {
		case useOverride("--attn-qkv-type", o.AttnQKV):
		case isAny(ft, FileTypeQ3_K_M, FileTypeQ3_K_L):
			set(formats.Q4_K)
		case ft == FileTypeIQ3_M:
			set(formats.IQ4_K)
		case ft == FileTypeQ4_K_M:
			set(formats.Q5_K)
		case ft == FileTypeQ5_K_M:
			set(formats.Q6_K)
		}

	case contains("ffn_gate"):
		res.branch = "ffn_gate"
		il, nl, err := qs.layerInfo(qs.iFFNGate, qs.nFFNGate, name)
		if err != nil {
			return res, err
		}
		switch {
		case useOverride("--ffn-gate-type", o.FFNGate):
		case ft == FileTypeIQ3_XS && il >= nl/8 && il < 7*nl/8:
			set(formats.IQ3_XXS)
		case ft == FileTypeIQ3_KL && useMoreBits(il, nl):
			set(formats.IQ4_KS)
		}
		qs.iFFNGate++

	case contains("ffn_up"):
		res.branch = "ffn_up"
		il, nl, err := qs.layerInfo(qs.iFFNUp, qs.nFFNUp, name)
		if err != nil {
			return res, err
		}
		switch {
		case useOverride("--ffn-up-type", o.FFNUp):
		case ft == FileTypeIQ3_XS && il >= nl/8 && il < 7*nl/8:
			set(formats.IQ3_XXS)
		case ft == FileTypeIQ3_KL && useMoreBits(il, nl):
			set(formats.IQ4_KS)
		}
		qs.iFFNUp++
	}
	return res, nil
}

func (qs *state) attnV(set func(formats.Type), useOverride func(string, *formats.Type) bool, newType formats.Type) {
	ft := qs.ftype
	m := qs.model
	gqa := qs.nGQA()
	bigVocab := m.NVocab >= 127999 && (m.Size == Size8B || m.Size == Size70B)
	switch {
	case useOverride("--attn-v-type", qs.opts.Overrides.AttnV):
	case m.NExpert >= 4:
		set(formats.Q8_0)
	case m.Size == Size70B:
		// Eight heads share attn_v in the 70B models, so more bits cost little.
		if newType == formats.Q3_K || newType == formats.Q4_K {
			set(formats.Q5_K)
			newType = formats.Q5_K
		}
		if newType == formats.IQ3_K {
			set(formats.IQ5_K)
		}
	case ft == FileTypeQ2_K:
		set(pick(gqa >= 4, formats.Q4_K, formats.Q3_K))
	case ft == FileTypeIQ2_K:
		set(pick(gqa >= 2, formats.IQ4_K, formats.IQ3_K))
	case ft == FileTypeIQ2_K_R4:
		set(pick(gqa >= 2, formats.IQ4_K_R4, formats.IQ3_K_R4))
	case ft == FileTypeQ2_K_S && gqa >= 4:
		set(formats.Q4_K)
	case ft == FileTypeQ2_K_R4 && gqa >= 4:
		set(formats.Q4_K_R4)
	case ft == FileTypeIQ3_XXS:
		switch {
		case gqa >= 4:
			set(formats.Q4_K)
		case gqa >= 2:
			set(formats.IQ3_K)
		case !qs.hasImatrix:
			set(formats.IQ3_S)
		default:
			set(formats.IQ3_XXS)
		}
	case ft == FileTypeIQ3_KT:
		set(pick(gqa >= 4, formats.IQ4_K, formats.IQ3_K))
	case ft == FileTypeIQ4_KT:
		set(pick(gqa >= 4, formats.IQ5_K, formats.IQ4_K))
	case ft == FileTypeIQ3_XXS_R4:
		switch {
		case gqa >= 4:
			set(formats.Q4_K_R4)
		case gqa >= 2:
			set(formats.IQ3_K_R4)
		case !qs.hasImatrix:
			set(formats.IQ3_K_R4)
		default:
			set(formats.IQ3_XXS_R4)
		}
	case isAny(ft, FileTypeIQ3_XS, FileTypeIQ3_S) && gqa >= 2:
		set(formats.IQ4_K)
	case ft == FileTypeIQ3_S_R4 && gqa >= 2:
		set(formats.IQ4_K_R4)
	case ft == FileTypeIQ3_K && gqa >= 2:
		set(formats.IQ4_K)
	case ft == FileTypeIQ3_KS && gqa >= 2:
		set(formats.IQ4_KS)
	case ft == FileTypeIQ2_KL && gqa >= 2:
		set(formats.IQ4_KS)
	case ft == FileTypeIQ3_K_R4 && gqa >= 2:
		set(formats.IQ4_K_R4)
	case ft == FileTypeIQ3_KL:
		set(pick(gqa >= 2, formats.IQ5_K, formats.IQ4_K))
	case ft == FileTypeIQ3_M:
		set(pick(gqa >= 2, formats.IQ5_K, formats.IQ4_K))
	case ft == FileTypeQ3_K_M:
		set(pick(qs.iAttentionWV < 2, formats.Q5_K, formats.Q4_K))
	case ft == FileTypeQ3_K_L:
		set(formats.Q5_K)
	case isAny(ft, FileTypeIQ4_NL, FileTypeIQ4_XS, FileTypeIQ4_NL_R4, FileTypeIQ4_XS_R8, FileTypeIQ4_KS, FileTypeIQ4_KSS) && gqa >= 2:
		set(formats.IQ5_K)
	case ft == FileTypeIQ4_KS_R4 && gqa >= 2:
		set(formats.IQ5_K_R4)
	case ft == FileTypeIQ4_K && gqa >= 2:
		set(formats.IQ5_K)
	case ft == FileTypeIQ4_K_R4 && gqa >= 2:
		set(formats.IQ5_K)
	case isAny(ft, FileTypeQ4_K_M, FileTypeQ5_K_M) && useMoreBits(qs.iAttentionWV, qs.nAttentionWV):
		set(formats.Q6_K)
	case ft == FileTypeQ4_K_S && qs.iAttentionWV < 4:
		set(formats.Q5_K)
	case ft == FileTypeQ4_K_R4 && qs.iAttentionWV < 4:
		set(formats.Q5_K)
	case ft == FileTypeQ5_K_S:
		if bigVocab {
			set(formats.Q6_K)
		}
	case isAny(ft, FileTypeIQ5_K, FileTypeIQ5_KS):
		if bigVocab {
			set(formats.IQ6_K)
		}
	case gqa >= 4 && !(m.Arch == "dflash-draft" && isAny(ft, FileTypeQ4_K_M, FileTypeQ5_K_M)):
		switch newType {
		case formats.Q2_K, formats.IQ3_XXS:
			set(formats.IQ3_S)
		case formats.Q2_K_R4, formats.IQ3_XXS_R4:
			set(formats.IQ3_K_R4)
		case formats.Q3_K, formats.IQ3_S:
			set(formats.Q4_K)
		case formats.IQ3_K:
			set(formats.IQ4_K)
		case formats.IQ3_KS, formats.IQ2_KL:
			set(formats.IQ4_KS)
		case formats.IQ3_S_R4, formats.Q3_K_R4:
			set(formats.Q4_K_R4)
		case formats.Q4_K, formats.IQ4_XS, formats.IQ4_NL, formats.IQ4_NL_R4, formats.IQ4_XS_R8:
			set(formats.Q5_K)
		case formats.IQ4_K, formats.IQ4_KS:
			set(formats.IQ5_K)
		case formats.Q5_K:
			set(formats.Q6_K)
		case formats.IQ5_K, formats.IQ5_KS:
			set(formats.IQ6_K)
		}
	}
}

func (qs *state) ffnDown(il, nl int, set func(formats.Type), useOverride func(string, *formats.Type) bool) {
	ft := qs.ftype
	m := qs.model
	falcon := m.Arch == "falcon"
	switch {
	case useOverride("--ffn-down-type", qs.opts.Overrides.FFNDown):
	case ft == FileTypeQ2_K:
		set(formats.Q3_K)
	case ft == FileTypeQ2_K_S:
		if il < nl/8 {
			set(formats.Q4_K)
		}
	case ft == FileTypeQ2_K_R4:
		if il < nl/8 {
			set(formats.Q4_K_R4)
		}
	case ft == FileTypeIQ3_XXS && !qs.hasImatrix:
		set(pick(il < nl/8, formats.Q4_K, formats.Q3_K))
	case ft == FileTypeIQ3_KT && !qs.hasImatrix:
		set(pick(il < nl/8, formats.IQ4_K, formats.IQ3_K))
	case ft == FileTypeIQ3_XXS_R4 && !qs.hasImatrix:
		set(pick(il < nl/8, formats.Q4_K_R4, formats.IQ3_K_R4))
	case ft == FileTypeQ3_K_M:
		switch {
		case il < nl/16:
			set(formats.Q5_K)
		case !falcon || useMoreBits(il, nl):
			set(formats.Q4_K)
		default:
			set(formats.Q3_K)
		}
	case ft == FileTypeIQ3_M && (il < nl/8 || (m.NExpert >= 4 && useMoreBits(il, nl))):
		set(formats.IQ4_K)
	case ft == FileTypeQ3_K_L:
		set(pick(falcon, formats.Q4_K, formats.Q5_K))
	case ft == FileTypeIQ3_KL:
		set(pick(useMoreBits(il, nl), formats.IQ4_KS, formats.IQ3_K))
	case ft == FileTypeQ4_K_M:
		if falcon {
			switch {
			case il < nl/16:
				set(formats.Q6_K)
			case useMoreBits(il, nl):
				set(formats.Q5_K)
			default:
				set(formats.Q4_K)
			}
		} else if useMoreBits(il, nl) {
			set(formats.Q6_K)
		}
	case il < nl/8 && !qs.hasImatrix && isAny(ft, FileTypeIQ4_NL, FileTypeIQ4_XS, FileTypeIQ4_KS, FileTypeIQ4_KSS,
		FileTypeIQ4_NL_R4, FileTypeIQ4_XS_R8):
		set(formats.Q5_K)
	case ft == FileTypeIQ4_KS_R4 && il < nl/8 && !qs.hasImatrix:
		set(formats.Q5_K_R4)
	case ft == FileTypeQ5_K_M && useMoreBits(il, nl):
		set(formats.Q6_K)
	case ft == FileTypeQ4_K_S && !falcon && il < nl/8:
		set(formats.Q5_K)
	case ft == FileTypeQ4_K_R4 && !falcon && il < nl/8:
		set(formats.Q5_K)
	case isAny(ft, FileTypeQ4_0, FileTypeQ5_0) && qs.hasImatrix && il < nl/8:
		// The reference guards the first ffn_down layers of Q4_0/Q5_0, only
		// with an imatrix so that plain runs stay as they always were.
		set(pick(ft == FileTypeQ4_0, formats.Q4_1, formats.Q5_1))
	case ft == FileTypeQ4_0_R8 && qs.hasImatrix && il < nl/8:
		set(formats.IQ4_NL_R4)
	}
}

func (qs *state) attnOutput(set func(formats.Type), useOverride func(string, *formats.Type) bool) {
	ft := qs.ftype
	m := qs.model
	switch {
	case useOverride("--attn-output-type", qs.opts.Overrides.AttnOutput):
	case m.Arch != "falcon":
		if m.NExpert >= 4 {
			switch {
			case isAny(ft, FileTypeQ2_K, FileTypeIQ3_XS, FileTypeIQ3_XXS, FileTypeQ3_K_S, FileTypeQ3_K_M,
				FileTypeIQ4_NL, FileTypeQ4_K_S, FileTypeQ4_K_M, FileTypeIQ3_S, FileTypeIQ3_M, FileTypeIQ4_XS,
				FileTypeIQ4_K, FileTypeIQ4_KSS, FileTypeIQ4_KS, FileTypeIQ4_KS_R4, FileTypeIQ5_KS,
				FileTypeIQ5_KS_R4, FileTypeIQ2_K, FileTypeIQ3_K, FileTypeIQ3_KL, FileTypeQ4_K_R4,
				FileTypeIQ4_NL_R4, FileTypeIQ4_XS_R8, FileTypeQ3_K_R4, FileTypeIQ3_KT, FileTypeIQ3_KS,
				FileTypeQ2_K_R4, FileTypeIQ4_K_R4, FileTypeIQ3_K_R4, FileTypeIQ2_K_R4, FileTypeIQ3_XXS_R4,
				FileTypeIQ3_S_R4):
				set(formats.Q5_K)
			case ft == FileTypeIQ2_KL:
				set(formats.IQ4_KS)
			}
		} else {
			switch {
			case ft == FileTypeQ2_K:
				set(formats.Q3_K)
			case ft == FileTypeIQ3_XXS:
				set(formats.IQ3_S)
			case ft == FileTypeIQ3_KT && qs.nGQA() >= 4:
				set(formats.IQ3_K)
			case ft == FileTypeIQ3_XXS_R4:
				set(formats.IQ3_K_R4)
			case ft == FileTypeQ3_K_M:
				set(formats.Q4_K)
			case ft == FileTypeQ3_K_L:
				set(formats.Q5_K)
			case ft == FileTypeIQ3_M:
				set(formats.IQ4_K)
			case ft == FileTypeIQ2_K:
				set(formats.IQ3_K)
			case ft == FileTypeIQ2_K_R4:
				set(formats.IQ3_K_R4)
			case ft == FileTypeIQ3_KL:
				set(formats.IQ4_KS)
			}
		}
	default:
		if ft == FileTypeQ3_K_L {
			set(formats.Q4_K)
		}
	}
}

func pick(cond bool, a, b formats.Type) formats.Type {
	if cond {
		return a
	}
	return b
}

// blockFallback is change_type_if_necessary: the type to use instead when a
// row of nx weights is not a multiple of t's block. It returns t itself when
// t fits and an error when the reference has no fallback.
func blockFallback(t formats.Type, nx int64) (formats.Type, error) {
	incompatible := false
	if typeIsAny(t, formats.Q2_K, formats.Q3_K, formats.Q4_K, formats.Q5_K, formats.Q6_K, formats.IQ4_XS,
		formats.IQ2_XS, formats.IQ2_XXS, formats.IQ2_S, formats.IQ3_XXS, formats.IQ1_S, formats.IQ3_S,
		formats.IQ1_M, formats.IQ4_K, formats.IQ2_K, formats.IQ5_K, formats.IQ3_K, formats.Q4_K_R4,
		formats.IQ6_K, formats.IQ4_KS, formats.IQ4_XS_R8, formats.IQ2_KS, formats.IQ4_KSS, formats.Q6_K_R4,
		formats.Q5_K_R4, formats.Q3_K_R4, formats.Q2_K_R4, formats.IQ4_K_R4, formats.Q8_K_R8, formats.IQ3_K_R4,
		formats.IQ2_K_R4, formats.IQ5_K_R4, formats.IQ4_KS_R4, formats.IQ3_XXS_R4, formats.IQ2_XXS_R4,
		formats.IQ2_XS_R4, formats.IQ2_S_R4, formats.IQ3_S_R4, formats.IQ3_KS, formats.IQ2_KT, formats.IQ3_KT,
		formats.IQ4_KT, formats.IQ5_KS, formats.IQ5_KS_R4, formats.IQ2_KL, formats.IQ1_KT) && nx%qkK != 0 {
		incompatible = true
	}
	if typeIsAny(t, formats.IQ1_BN, formats.IQ2_BN, formats.IQ2_BN_R4) && nx%qkBN != 0 {
		incompatible = true
	}
	if !incompatible {
		return t, nil
	}
	switch t {
	case formats.IQ2_XXS, formats.IQ2_XXS_R4, formats.IQ2_XS, formats.IQ2_XS_R4, formats.IQ2_KS, formats.IQ2_S,
		formats.IQ2_S_R4, formats.IQ3_XXS, formats.IQ3_XXS_R4, formats.IQ3_S, formats.IQ3_S_R4, formats.IQ1_S,
		formats.IQ1_M, formats.Q2_K, formats.Q2_K_R4, formats.Q3_K, formats.Q3_K_R4, formats.IQ2_K,
		formats.IQ2_K_R4, formats.IQ2_KL, formats.IQ3_KS, formats.IQ3_K, formats.IQ3_K_R4, formats.IQ4_KSS,
		formats.IQ4_KS, formats.IQ4_KS_R4, formats.IQ4_XS_R8, formats.IQ1_KT, formats.IQ2_KT, formats.IQ3_KT,
		formats.IQ4_KT, formats.IQ4_XS:
		return formats.IQ4_NL, nil
	case formats.IQ4_K, formats.IQ4_K_R4, formats.Q4_K_R4, formats.IQ5_KS, formats.IQ5_KS_R4, formats.Q4_K:
		return formats.Q5_0, nil
	case formats.IQ5_K, formats.IQ5_K_R4, formats.Q5_K_R4, formats.Q5_K:
		return formats.Q6_0, nil
	case formats.IQ6_K, formats.Q6_K_R4, formats.Q8_K_R8, formats.Q6_K:
		return formats.Q8_0, nil
	}
	return t, fmt.Errorf("recipes: unsupported tensor size: rows of %d weights do not fit %s and it has no fallback", nx, t)
}

// interleaved is the reference's interleaved_properties: the type whose
// rows an interleaved type stores and how many rows it stores together.
// It is the reference's own table (Q8_K_R8 falls back to q8_0 there, the
// q4_0_4x4 family counts as interleaved, q8_k_r16 does not), which is why it
// is kept here rather than taken from formats.
var interleaved = map[formats.Type]struct {
	base formats.Type
	rows int
}{
	formats.Q4_0_4X4: {formats.Q4_0, 4}, formats.Q4_0_4X8: {formats.Q4_0, 4}, formats.Q4_0_8X8: {formats.Q4_0, 8},
	formats.Q4_0_R8: {formats.Q4_0, 8}, formats.Q5_0_R4: {formats.Q5_0, 4}, formats.Q6_0_R4: {formats.Q6_0, 4},
	formats.Q8_0_R8: {formats.Q8_0, 8}, formats.Q2_K_R4: {formats.Q2_K, 4}, formats.Q3_K_R4: {formats.Q3_K, 4},
	formats.Q4_K_R4: {formats.Q4_K, 4}, formats.Q5_K_R4: {formats.Q5_K, 4}, formats.Q6_K_R4: {formats.Q6_K, 4},
	formats.IQ2_XXS_R4: {formats.IQ2_XXS, 4}, formats.IQ2_XS_R4: {formats.IQ2_XS, 4}, formats.IQ2_S_R4: {formats.IQ2_S, 4},
	formats.IQ3_XXS_R4: {formats.IQ3_XXS, 4}, formats.IQ3_S_R4: {formats.IQ3_S, 4}, formats.IQ4_XS_R8: {formats.IQ4_XS, 8},
	formats.IQ4_NL_R4: {formats.IQ4_NL, 4}, formats.IQ1_S_R4: {formats.IQ1_S, 4}, formats.IQ1_M_R4: {formats.IQ1_M, 4},
	formats.IQ2_BN_R4: {formats.IQ2_BN, 4}, formats.IQ2_K_R4: {formats.IQ2_K, 4}, formats.IQ3_K_R4: {formats.IQ3_K, 4},
	formats.IQ4_K_R4: {formats.IQ4_K, 4}, formats.IQ4_KS_R4: {formats.IQ4_KS, 4}, formats.IQ5_KS_R4: {formats.IQ5_KS, 4},
	formats.IQ5_K_R4: {formats.IQ5_K, 4}, formats.MXFP4_R8: {formats.MXFP4, 8}, formats.Q8_KV_R8: {formats.Q8_KV, 8},
	formats.Q8_K_R8: {formats.Q8_0, 8}, formats.BF16_R16: {formats.BF16, 16},
}

func interleavedProperties(t formats.Type) (formats.Type, int) {
	if p, ok := interleaved[t]; ok {
		return p.base, p.rows
	}
	return t, 1
}

// NeedsImatrix reports whether llama-quantize refuses to quantize a tensor
// called name to t under file type ft when it has no importance data for
// it (unless --ignore-imatrix-rules): the very-low-bit types
// (formats.TypeInfo.RefusedWithoutImatrix), and q2_K in a Q2_K_S file.
// token_embd.weight and output.weight are exempt.
func NeedsImatrix(t formats.Type, ft FileType, name string) bool {
	if name == "token_embd.weight" || name == "output.weight" {
		return false
	}
	info, _ := t.Info()
	return info.RefusedWithoutImatrix || (t == formats.Q2_K && ft == FileTypeQ2_K_S)
}
