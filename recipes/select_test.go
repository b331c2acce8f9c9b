package recipes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// llamaDense is a Llama-3-8B-shaped model: 32 layers, 32 heads sharing 8 KV
// heads (n_gqa 4), a 128256-token vocabulary.
func llamaDense(nLayer int, tiedOutput bool) (Model, []gguf.TensorInfo) {
	m := Model{Arch: "llama", NLayer: nLayer, NHead: 32, NHeadKV: 8, NVocab: 128256, FileType: FileTypeBF16}
	m.Size = GuessModelSize(m.Arch, m.NLayer, m.NVocab, m.NHead, m.NHeadKV, m.NExpert, 4096)
	ts := []gguf.TensorInfo{{Name: "token_embd.weight", Shape: []int64{4096, 128256}, Type: formats.BF16}}
	for il := 0; il < nLayer; il++ {
		p := fmt.Sprintf("blk.%d.", il)
		ts = append(ts,
			gguf.TensorInfo{Name: p + "attn_norm.weight", Shape: []int64{4096}, Type: formats.F32},
			gguf.TensorInfo{Name: p + "attn_q.weight", Shape: []int64{4096, 4096}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "attn_k.weight", Shape: []int64{4096, 1024}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "attn_v.weight", Shape: []int64{4096, 1024}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "attn_output.weight", Shape: []int64{4096, 4096}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "ffn_norm.weight", Shape: []int64{4096}, Type: formats.F32},
			gguf.TensorInfo{Name: p + "ffn_gate.weight", Shape: []int64{4096, 14336}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "ffn_up.weight", Shape: []int64{4096, 14336}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "ffn_down.weight", Shape: []int64{14336, 4096}, Type: formats.BF16},
		)
	}
	ts = append(ts, gguf.TensorInfo{Name: "output_norm.weight", Shape: []int64{4096}, Type: formats.F32})
	if !tiedOutput {
		ts = append(ts, gguf.TensorInfo{Name: "output.weight", Shape: []int64{4096, 128256}, Type: formats.BF16})
	}
	return m, ts
}

// llamaMoE is a Mixtral-shaped model: 8 experts, stacked expert tensors.
func llamaMoE(nLayer int) (Model, []gguf.TensorInfo) {
	m := Model{Arch: "llama", NLayer: nLayer, NExpert: 8, NHead: 32, NHeadKV: 8, NVocab: 32000, FileType: FileTypeBF16}
	ts := []gguf.TensorInfo{{Name: "token_embd.weight", Shape: []int64{4096, 32000}, Type: formats.BF16}}
	for il := 0; il < nLayer; il++ {
		p := fmt.Sprintf("blk.%d.", il)
		ts = append(ts,
			gguf.TensorInfo{Name: p + "attn_norm.weight", Shape: []int64{4096}, Type: formats.F32},
			gguf.TensorInfo{Name: p + "attn_q.weight", Shape: []int64{4096, 4096}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "attn_k.weight", Shape: []int64{4096, 1024}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "attn_v.weight", Shape: []int64{4096, 1024}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "attn_output.weight", Shape: []int64{4096, 4096}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "ffn_gate_inp.weight", Shape: []int64{4096, 8}, Type: formats.F32},
			gguf.TensorInfo{Name: p + "ffn_norm.weight", Shape: []int64{4096}, Type: formats.F32},
			// experts deliberately out of the usual order: the layer comes from the name
			gguf.TensorInfo{Name: p + "ffn_down_exps.weight", Shape: []int64{14336, 4096, 8}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "ffn_gate_exps.weight", Shape: []int64{4096, 14336, 8}, Type: formats.BF16},
			gguf.TensorInfo{Name: p + "ffn_up_exps.weight", Shape: []int64{4096, 14336, 8}, Type: formats.BF16},
		)
	}
	ts = append(ts, gguf.TensorInfo{Name: "output_norm.weight", Shape: []int64{4096}, Type: formats.F32},
		gguf.TensorInfo{Name: "output.weight", Shape: []int64{4096, 32000}, Type: formats.BF16})
	return m, ts
}

func mustSelect(t *testing.T, opts Options, m Model, ts []gguf.TensorInfo) map[string]Choice {
	t.Helper()
	plan, err := Select(opts, m, ts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Choice{}
	for _, c := range plan.Choices {
		out[c.Name] = c
	}
	return out
}

// moreBits is the reference's use_more_bits for 32 layers, spelled out.
var moreBits32 = map[int]bool{0: true, 1: true, 2: true, 3: true, 6: true, 9: true, 12: true, 15: true, 18: true,
	21: true, 24: true, 27: true, 28: true, 29: true, 30: true, 31: true}

func TestLlamaDenseMixtures(t *testing.T) {
	m, ts := llamaDense(32, false)
	if m.Size != Size8B {
		t.Fatalf("model size %s, want 8B", m.Size)
	}
	type expect func(il int) formats.Type
	cases := []struct {
		ft     FileType
		imat   bool
		fixed  map[string]formats.Type // whole-name expectations
		layers map[string]expect       // per-layer tensor kind -> expectation
	}{
		{
			ft:    FileTypeQ4_K_M,
			fixed: map[string]formats.Type{"token_embd.weight": formats.Q4_K, "output.weight": formats.Q6_K},
			layers: map[string]expect{
				"attn_v.weight":      func(il int) formats.Type { return pick(moreBits32[il], formats.Q6_K, formats.Q5_K) },
				"ffn_down.weight":    func(il int) formats.Type { return pick(moreBits32[il], formats.Q6_K, formats.Q4_K) },
				"attn_q.weight":      func(int) formats.Type { return formats.Q4_K },
				"attn_k.weight":      func(int) formats.Type { return formats.Q4_K },
				"attn_output.weight": func(int) formats.Type { return formats.Q4_K },
				"ffn_gate.weight":    func(int) formats.Type { return formats.Q4_K },
				"attn_norm.weight":   func(int) formats.Type { return formats.F32 },
			},
		},
		{
			ft:    FileTypeQ3_K_M,
			fixed: map[string]formats.Type{"token_embd.weight": formats.Q3_K, "output.weight": formats.Q6_K},
			layers: map[string]expect{
				"attn_v.weight":      func(il int) formats.Type { return pick(il < 2, formats.Q5_K, formats.Q4_K) },
				"ffn_down.weight":    func(il int) formats.Type { return pick(il < 2, formats.Q5_K, formats.Q4_K) },
				"attn_output.weight": func(int) formats.Type { return formats.Q4_K },
				"ffn_up.weight":      func(int) formats.Type { return formats.Q3_K },
			},
		},
		{
			ft: FileTypeIQ2_XXS, imat: true,
			fixed: map[string]formats.Type{"token_embd.weight": formats.Q2_K, "output.weight": formats.Q5_K},
			layers: map[string]expect{
				"attn_v.weight":      func(int) formats.Type { return formats.IQ4_K },
				"ffn_down.weight":    func(il int) formats.Type { return pick(il < 4, formats.Q2_K, formats.IQ2_XXS) },
				"attn_q.weight":      func(int) formats.Type { return formats.IQ2_XXS },
				"attn_output.weight": func(int) formats.Type { return formats.IQ2_XXS },
			},
		},
		{
			ft:    FileTypeQ5_K_S,
			fixed: map[string]formats.Type{"token_embd.weight": formats.Q5_K, "output.weight": formats.Q6_K},
			layers: map[string]expect{
				// 8B with a vocabulary of at least 127999 tokens
				"attn_v.weight": func(int) formats.Type { return formats.Q6_K },
				"attn_q.weight": func(int) formats.Type { return formats.Q4_K },
			},
		},
		{
			ft:    FileTypeIQ4_XS,
			fixed: map[string]formats.Type{"token_embd.weight": formats.IQ4_XS, "output.weight": formats.Q6_K},
			layers: map[string]expect{
				"attn_v.weight":   func(int) formats.Type { return formats.IQ5_K },
				"ffn_down.weight": func(il int) formats.Type { return pick(il < 4, formats.Q5_K, formats.IQ4_XS) },
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.ft.String(), func(t *testing.T) {
			got := mustSelect(t, Options{FileType: tc.ft, HasImatrix: tc.imat}, m, ts)
			for name, want := range tc.fixed {
				if got[name].Type != want {
					t.Errorf("%s: %s, want %s", name, got[name], want)
				}
			}
			for kind, want := range tc.layers {
				for il := 0; il < 32; il++ {
					name := fmt.Sprintf("blk.%d.%s", il, kind)
					if w := want(il); got[name].Type != w {
						t.Errorf("%s: %s, want %s", name, got[name], w)
					}
				}
			}
		})
	}
}

func TestLlamaMoEMixture(t *testing.T) {
	m, ts := llamaMoE(32)
	got := mustSelect(t, Options{FileType: FileTypeQ4_K_M}, m, ts)
	for il := 0; il < 32; il++ {
		p := fmt.Sprintf("blk.%d.", il)
		want := map[string]formats.Type{
			"attn_v.weight":        formats.Q8_0, // 8 experts
			"attn_k.weight":        formats.Q8_0,
			"attn_output.weight":   formats.Q5_K,
			"attn_q.weight":        formats.Q4_K,
			"ffn_gate_inp.weight":  formats.F32, // never quantized
			"ffn_down_exps.weight": pick(moreBits32[il], formats.Q6_K, formats.Q4_K),
			"ffn_gate_exps.weight": formats.Q4_K,
		}
		for k, w := range want {
			if c := got[p+k]; c.Type != w {
				t.Errorf("%s: %s, want %s", p+k, c, w)
			}
		}
		if c := got[p+"ffn_gate_inp.weight"]; c.Quantize || !strings.Contains(c.Why, "gating") {
			t.Errorf("ffn_gate_inp: %s", c)
		}
	}

	// IQ2_XS with 8 experts: attn_k and attn_q get q4_K, attn_v iq4_k.
	got = mustSelect(t, Options{FileType: FileTypeIQ2_XS, HasImatrix: true}, m, ts)
	for name, want := range map[string]formats.Type{
		"blk.5.attn_k.weight": formats.Q4_K, "blk.5.attn_q.weight": formats.Q4_K, "blk.5.attn_v.weight": formats.IQ4_K,
		"blk.5.attn_output.weight": formats.Q5_K, "blk.0.ffn_down_exps.weight": formats.Q2_K,
		"blk.5.ffn_down_exps.weight": formats.IQ2_XS, "output.weight": formats.Q5_K, "token_embd.weight": formats.Q2_K,
	} {
		if c := got[name]; c.Type != want {
			t.Errorf("IQ2_XS %s: %s, want %s", name, c, want)
		}
	}
	if c := got["blk.5.ffn_up_exps.weight"]; !c.NeedsImatrix {
		t.Errorf("iq2_xs expert tensor should need an imatrix: %+v", c)
	}

	// A tensor outside any block cannot be placed in a layer.
	bad := append([]gguf.TensorInfo{}, ts...)
	bad = append(bad, gguf.TensorInfo{Name: "extra.ffn_down.weight", Shape: []int64{256, 256}, Type: formats.BF16})
	if _, err := Select(Options{FileType: FileTypeQ4_K_M}, m, bad); err == nil || !strings.Contains(err.Error(), "determine layer") {
		t.Errorf("want a layer error, got %v", err)
	}
}

func TestTiedOutputAndFallbacks(t *testing.T) {
	m, ts := llamaDense(4, true)
	got := mustSelect(t, Options{FileType: FileTypeQ4_K_M}, m, ts)
	if c := got["token_embd.weight"]; c.Type != formats.Q6_K {
		t.Errorf("tied token_embd under Q4_K_M: %s, want q6_K (the output rule)", c)
	}
	got = mustSelect(t, Options{FileType: FileTypeIQ2_K}, m, ts)
	if c := got["token_embd.weight"]; c.Type != formats.IQ4_K {
		t.Errorf("tied token_embd under IQ2_K: %s, want iq4_k", c)
	}

	// Rows of 4000 do not fit q6_K's 256-blocks: the reference falls back to q8_0.
	ts2 := []gguf.TensorInfo{{Name: "blk.0.ffn_down.weight", Shape: []int64{4000, 512}, Type: formats.BF16}}
	m2 := Model{Arch: "llama", NLayer: 1, NHead: 8, NHeadKV: 8}
	plan, err := Select(Options{FileType: FileTypeQ4_K_M}, m2, ts2)
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Choices[0]; c.Type != formats.Q8_0 || len(c.Fallbacks) != 1 || plan.NFallback != 1 {
		t.Errorf("fallback: %s (n_fallback %d)", c, plan.NFallback)
	}

	// 6 rows cannot be interleaved by 4: iq4_ks_r4 becomes iq4_ks.
	ts3 := []gguf.TensorInfo{{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 6}, Type: formats.BF16}}
	got = mustSelect(t, Options{FileType: FileTypeIQ4_KS_R4}, m2, ts3)
	if c := got["blk.0.ffn_up.weight"]; c.Type != formats.IQ4_KS {
		t.Errorf("row-count fallback: %s", c)
	}
}

func TestOverridesAndModes(t *testing.T) {
	m, ts := llamaMoE(2)
	q80, f16 := formats.Q8_0, formats.F16
	got := mustSelect(t, Options{FileType: FileTypeQ4_K_M, Overrides: Overrides{
		AttnV:          TypePtr(formats.IQ6_K),
		TokenEmbedding: TypePtr(formats.Q4_K_R4),
		Output:         &q80,
		FFNGateInp:     &f16,
		AttnQ:          TypePtr(formats.Q5_K), // bare-name option: acts inside the attn_q rule
	}}, m, ts)
	for name, want := range map[string]formats.Type{
		"blk.1.attn_v.weight":       formats.IQ6_K,
		"token_embd.weight":         formats.Q4_K, // interleaved types are refused for embeddings
		"output.weight":             formats.Q8_0,
		"blk.1.ffn_gate_inp.weight": formats.F16,
		"blk.1.attn_q.weight":       formats.Q5_K,
	} {
		if c := got[name]; c.Type != want || c.Reason != ReasonOverride {
			t.Errorf("%s: %s (reason %s), want %s by option", name, c, c.Reason, want)
		}
	}

	got = mustSelect(t, Options{FileType: FileTypeQ4_K_M, LeaveOutputTensor: true}, m, ts)
	if c := got["output.weight"]; c.Quantize || c.Type != formats.BF16 {
		t.Errorf("--leave-output-tensor: %s", c)
	}
	// The tensor --extra-output-tensor duplicates is quantized whatever
	// else says, as the reference quantizes it (its output_tensor); under
	// COPY it keeps its type unless --output-tensor-type names it. All
	// three agree with llama-quantize's outputs.
	quant := mustSelect(t, Options{FileType: FileTypeQ4_K_M}, m, ts)["output.weight"]
	got = mustSelect(t, Options{FileType: FileTypeQ4_K_M, LeaveOutputTensor: true, ExtraOutputSource: "output.weight"}, m, ts)
	if c := got["output.weight"]; !c.Quantize || c.Type != quant.Type {
		t.Errorf("--leave-output-tensor --extra-output-tensor: %s, want %s", c, quant.Type)
	}
	got = mustSelect(t, Options{FileType: FileTypeAllF32, CopyOnly: true, ExtraOutputSource: "output.weight"}, m, ts)
	if c := got["output.weight"]; c.Quantize || c.Type != formats.BF16 {
		t.Errorf("COPY --extra-output-tensor: %s", c)
	}
	got = mustSelect(t, Options{FileType: FileTypeAllF32, CopyOnly: true, ExtraOutputSource: "output.weight", Overrides: Overrides{Output: &q80}}, m, ts)
	if c := got["output.weight"]; !c.Quantize || c.Type != formats.Q8_0 {
		t.Errorf("COPY --output-tensor-type q8_0 --extra-output-tensor: %s", c)
	}

	rules, err := ParseCustomQ(`attn=q8_0`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		opts          Options
		wantAttn      formats.Type
		wantRuleWarns bool
	}{
		{"pure applies rules", Options{FileType: FileTypeQ4_0, Pure: true, Rules: rules}, formats.Q8_0, true},
		{"pure like reference", Options{FileType: FileTypeQ4_0, Pure: true, Rules: rules, LikeReference: true}, formats.Q4_0, true},
		{"f16 applies rules", Options{FileType: FileTypeF16, Rules: rules}, formats.Q8_0, true},
		{"bf16 like reference", Options{FileType: FileTypeBF16, Rules: rules, LikeReference: true}, formats.BF16, true},
		{"q4_0 uses rules", Options{FileType: FileTypeQ4_0, Rules: rules}, formats.Q8_0, false},
	} {
		plan, err := Select(tc.opts, m, ts)
		if err != nil {
			t.Fatal(err)
		}
		if c := plan.Choices[2]; c.Name != "blk.0.attn_q.weight" || c.Type != tc.wantAttn {
			t.Errorf("%s: %s, want %s", tc.name, c, tc.wantAttn)
		}
		warned := strings.Contains(strings.Join(plan.Warnings, "\n"), "llama-quantize")
		if warned != tc.wantRuleWarns {
			t.Errorf("%s: warnings %q", tc.name, plan.Warnings)
		}
	}

	// f16 file type: bf16 weights converted, norms and gating copied.
	got = mustSelect(t, Options{FileType: FileTypeF16}, m, ts)
	if c := got["blk.0.ffn_up_exps.weight"]; c.Type != formats.F16 || !c.Quantize {
		t.Errorf("F16: %s", c)
	}
	if c := got["blk.0.attn_norm.weight"]; c.Quantize {
		t.Errorf("F16 norm: %s", c)
	}

	// COPY: nothing converted, the input's file type kept.
	plan, err := Select(Options{FileType: FileTypeAllF32, CopyOnly: true}, m, ts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range plan.Choices {
		if c.Quantize {
			t.Errorf("COPY converts %s", c)
		}
	}
	if plan.FileType != FileTypeBF16 {
		t.Errorf("COPY file type %s", plan.FileType)
	}
}

func TestNeedsImatrix(t *testing.T) {
	for _, tc := range []struct {
		t    formats.Type
		ft   FileType
		name string
		want bool
	}{
		{formats.IQ2_XXS, FileTypeIQ2_XXS, "blk.0.ffn_up.weight", true},
		{formats.IQ2_XXS_R4, FileTypeIQ2_K, "blk.0.ffn_up.weight", true},
		{formats.IQ1_KT, FileTypeIQ1_KT, "blk.0.ffn_up.weight", true},
		{formats.IQ2_KT, FileTypeIQ2_KT, "blk.0.ffn_up.weight", true},
		{formats.IQ1_M_R4, FileTypeIQ1_M_R4, "blk.0.ffn_up.weight", true},
		{formats.IQ2_XXS, FileTypeIQ2_XXS, "token_embd.weight", false},
		{formats.IQ2_XS, FileTypeIQ2_XS, "output.weight", false},
		{formats.Q2_K, FileTypeQ2_K_S, "blk.0.ffn_up.weight", true},
		{formats.Q2_K, FileTypeQ2_K, "blk.0.ffn_up.weight", false},
		{formats.IQ3_XXS, FileTypeIQ3_XXS, "blk.0.ffn_up.weight", false},
		{formats.IQ2_K, FileTypeIQ2_K, "blk.0.ffn_up.weight", false},
	} {
		if got := NeedsImatrix(tc.t, tc.ft, tc.name); got != tc.want {
			t.Errorf("NeedsImatrix(%s, %s, %s) = %v", tc.t, tc.ft, tc.name, got)
		}
	}
	// The plan marks the tensors the rule applies to; --ignore-imatrix-rules
	// marks none (the pipeline refuses marked tensors without data).
	m, ts := llamaDense(2, false)
	for _, ignore := range []bool{false, true} {
		plan, err := Select(Options{FileType: FileTypeIQ2_XXS, IgnoreImatrixRules: ignore}, m, ts)
		if err != nil {
			t.Fatal(err)
		}
		marked := 0
		for _, c := range plan.Choices {
			if c.NeedsImatrix {
				marked++
				if !c.Quantize || c.Name == "token_embd.weight" || c.Name == "output.weight" {
					t.Errorf("ignore=%v: %s marked", ignore, c)
				}
			}
		}
		if (marked > 0) == ignore {
			t.Errorf("ignore=%v: %d tensors marked as needing importance data", ignore, marked)
		}
	}
}

func TestCopyRules(t *testing.T) {
	m := Model{Arch: "bert", NLayer: 1}
	for _, tc := range []struct {
		tensor gguf.TensorInfo
		quant  bool
	}{
		{gguf.TensorInfo{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 256}, Type: formats.BF16}, true},
		{gguf.TensorInfo{Name: "blk.0.ffn_up.bias", Shape: []int64{256, 256}, Type: formats.BF16}, false},
		{gguf.TensorInfo{Name: "abcde", Shape: []int64{256, 256}, Type: formats.BF16}, true}, // the reference's size()-6 wrap-around
		{gguf.TensorInfo{Name: "abcd", Shape: []int64{256, 256}, Type: formats.BF16}, false},
		{gguf.TensorInfo{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 1, 1, 1}, Type: formats.BF16}, false},
		{gguf.TensorInfo{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 1, 4}, Type: formats.BF16}, true},
		{gguf.TensorInfo{Name: "blk.0.attn_out_norm.weight", Shape: []int64{256, 256}, Type: formats.BF16}, false},
		{gguf.TensorInfo{Name: "position_embd.weight", Shape: []int64{256, 256}, Type: formats.BF16}, false},
		{gguf.TensorInfo{Name: "token_types.weight", Shape: []int64{256, 2}, Type: formats.BF16}, false},
		{gguf.TensorInfo{Name: "blk.0.ssm_conv1d.weight", Shape: []int64{256, 256}, Type: formats.BF16}, false},
		{gguf.TensorInfo{Name: "blk.0.attn_rel_b.weight", Shape: []int64{256, 256}, Type: formats.BF16}, false},
		{gguf.TensorInfo{Name: "blk.0.idx.weight", Shape: []int64{256, 256}, Type: formats.I32}, false},
	} {
		plan, err := Select(Options{FileType: FileTypeQ8_0}, m, []gguf.TensorInfo{tc.tensor})
		if err != nil {
			t.Fatal(err)
		}
		if c := plan.Choices[0]; c.Quantize != tc.quant {
			t.Errorf("%s %v: %s", tc.tensor.Name, tc.tensor.Shape, c)
		}
	}
}

// The reference's interleave table differs from formats' on purpose in a
// few places; everywhere else they must agree.
func TestInterleavedTableAgainstFormats(t *testing.T) {
	referenceOnly := map[formats.Type]bool{formats.Q4_0_4X4: true, formats.Q4_0_4X8: true, formats.Q4_0_8X8: true, formats.Q8_K_R8: true}
	for typ, p := range interleaved {
		if referenceOnly[typ] {
			continue
		}
		if typ.Base() != p.base || typ.Interleave() != p.rows {
			t.Errorf("%s: reference %s x%d, formats %s x%d", typ, p.base, p.rows, typ.Base(), typ.Interleave())
		}
	}
}
