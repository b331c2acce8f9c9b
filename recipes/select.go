package recipes

import (
	"fmt"
	"strings"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// Model holds the hyper-parameters the type choice reads, as plain values
// from the input's metadata.
type Model struct {
	Arch     string    // general.architecture
	NLayer   int       // <arch>.block_count
	NExpert  int       // <arch>.expert_count, 0 for dense models
	NHead    int       // <arch>.attention.head_count (layer 0)
	NHeadKV  int       // <arch>.attention.head_count_kv (layer 0; the loader defaults it to NHead)
	NVocab   int       // <arch>.vocab_size, or the tokenizer's token count
	Size     ModelSize // see GuessModelSize
	FileType FileType  // the input's general.file_type (used by --repack and COPY)
	// LoaderStop, when not empty, says why llama-quantize's loader stops
	// reading the hyper-parameters: those after it are 0 here too, as
	// they are for llama-quantize's type choice (loaderStop).
	LoaderStop string
}

// ne is a shape as ggml's four dimensions (missing ones count as 1).
func ne(shape []int64) [4]int64 {
	ne := [4]int64{1, 1, 1, 1}
	copy(ne[:], shape)
	return ne
}

// nDims is ggml_n_dims: dimensions up to the last one larger than 1.
func nDims(shape []int64) int {
	ne := ne(shape)
	for i := 3; i >= 1; i-- {
		if ne[i] > 1 {
			return i + 1
		}
	}
	return 1
}

// Overrides are the --*-type options. nil means not given. Note that the
// reference applies some of them only to tensors named exactly like the
// option says ("attn_q.weight"), which no real model has; Select does the same.
type Overrides struct {
	Output                 *formats.Type // --output-tensor-type
	TokenEmbedding         *formats.Type // --token-embedding-type
	PerLayerTokenEmbedding *formats.Type // --per-layer-token-embedding-type
	FFNGateInp             *formats.Type // --ffn-gate-inp-type
	AttnQ                  *formats.Type // --attn-q-type
	AttnK                  *formats.Type // --attn-k-type
	AttnV                  *formats.Type // --attn-v-type
	AttnQKV                *formats.Type // --attn-qkv-type
	AttnOutput             *formats.Type // --attn-output-type
	FFNGate                *formats.Type // --ffn-gate-type
	FFNDown                *formats.Type // --ffn-down-type
	FFNUp                  *formats.Type // --ffn-up-type
}

// TypePtr returns a pointer to t, for filling Overrides.
func TypePtr(t formats.Type) *formats.Type { return &t }

// Options are the llama-quantize options that bear on the type choice.
type Options struct {
	FileType          FileType
	CopyOnly          bool // the COPY file type: every tensor copied unchanged
	Pure              bool // --pure
	LeaveOutputTensor bool // --leave-output-tensor
	// ExtraOutputSource names the tensor --extra-output-tensor duplicates
	// ("" for none): the reference quantizes it whatever else says
	// (--leave-output-tensor; under COPY it keeps its type unless
	// --output-tensor-type names it).
	ExtraOutputSource  string
	Overrides          Overrides
	Rules              *RuleSet // --custom-q rules and recipe files, in order
	HasImatrix         bool     // an importance matrix with at least one entry was given
	IgnoreImatrixRules bool     // --ignore-imatrix-rules
	// LikeReference ignores the rules where llama-quantize silently ignores
	// them (with --pure and for the F32/F16/BF16/BF16_R16 file types). By
	// default the rules are applied there and the plan carries a warning.
	LikeReference bool
	// RuleBudget bounds the time of all the regex searches of the plan
	// (DefaultRuleBudget when 0).
	RuleBudget time.Duration
}

// Reason says which stage decided a tensor's type.
type Reason int

const (
	ReasonCopied     Reason = iota // not quantized: copied unchanged (Why says which rule)
	ReasonDefault                  // the file type's default type
	ReasonBuiltin                  // the reference's built-in mixture for the file type
	ReasonCustomRule               // a --custom-q or recipe rule (Choice.Rule)
	ReasonOverride                 // a --*-type option (Choice.Option)
)

func (r Reason) String() string {
	switch r {
	case ReasonCopied:
		return "copied"
	case ReasonDefault:
		return "default"
	case ReasonBuiltin:
		return "built-in"
	case ReasonCustomRule:
		return "custom rule"
	case ReasonOverride:
		return "option"
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Choice is the decision for one tensor.
type Choice struct {
	Index    int
	Name     string
	Shape    []int64
	Source   formats.Type // type in the input
	Type     formats.Type // type in the output (== Source when not Quantize)
	Quantize bool         // the data is converted, not copied
	Reason   Reason
	Rule     *Rule // the custom rule that decided, for ReasonCustomRule
	// RuleApplied is the custom rule whose type was taken at the rules'
	// step (llama-quantize logs "Using custom type" for it) even where
	// something after it decided: an option (--output-tensor-type), or
	// the source type, so that the tensor is copied. nil if none.
	RuleApplied *Rule
	Option      string // the option that decided, for ReasonOverride ("--attn-v-type")
	Why         string // one line a planner can print
	// Fallbacks lists the substitutions made after the choice because the
	// tensor does not fit the chosen type (row length, row count, token
	// embeddings that cannot be interleaved).
	Fallbacks []string
	// RulesConsulted is true when the custom rules took part in the
	// decision (in the reference they are only looked at for quantized
	// tensors, and not at all with --pure or float file types).
	RulesConsulted bool
	// NeedsImatrix: llama-quantize refuses this tensor unless importance
	// data exists for it or --ignore-imatrix-rules is given.
	NeedsImatrix bool
}

// Plan is the decision for a whole model.
type Plan struct {
	FileType  FileType // the general.file_type to write
	Choices   []Choice
	Warnings  []string
	NFallback int // tensors that needed a row-length fallback (the reference's n_fallback)
	Rules     *RuleSet
}

// Select decides the output type of every tensor, in order, as llama-quantize
// would. The tensors must be the whole model in file order: the built-in
// mixture counts attn_v/ffn_down tensors as it goes. Only each tensor's
// Name, Shape (ne0 first) and Type are read.
func Select(opts Options, model Model, tensors []gguf.TensorInfo) (*Plan, error) {
	plan := &Plan{FileType: opts.FileType, Rules: opts.Rules}
	if opts.Rules != nil {
		plan.Warnings = append(plan.Warnings, opts.Rules.Warnings...)
	}
	ft := opts.FileType
	if opts.CopyOnly {
		ft = model.FileType
		plan.FileType = model.FileType
	}
	defaultType, err := opts.FileType.DefaultType()
	if err != nil {
		return nil, err
	}
	budget := NewBudget(opts.RuleBudget)
	qs := &state{model: model, opts: &opts, ftype: ft, output: archOutputName(model.Arch), hasImatrix: opts.HasImatrix}
	for _, t := range tensors {
		if strings.Contains(t.Name, "attn_v.weight") || strings.Contains(t.Name, "attn_qkv.weight") {
			qs.nAttentionWV++
		} else if t.Name == qs.output {
			qs.hasOutput = true
		}
	}
	qs.nFFNDown, qs.nFFNGate, qs.nFFNUp = model.NLayer, model.NLayer, model.NLayer
	nl := model.NLayer
	if !(qs.nAttentionWV == 0 || qs.nAttentionWV == nl || qs.nAttentionWV == 3*nl ||
		model.Arch == "deci" || model.Arch == "gemma4" || !knownArchs[model.Arch]) {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("%d attn_v/attn_qkv tensors for %d layers: llama-quantize aborts on this model (n_attention_wv is unexpected)", qs.nAttentionWV, nl))
	}

	if model.LoaderStop != "" {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s: it stops there and chooses the types with the hyper-parameters after it as 0 (experts, heads, the size class); so does gquant, to write the same file", model.LoaderStop))
	}
	ignoredBy := ""
	if opts.Pure {
		ignoredBy = "--pure"
	} else if !defaultType.IsQuantized() {
		ignoredBy = "file type " + opts.FileType.String()
	}
	if ignoredBy != "" && opts.Rules.Len() > 0 {
		if opts.LikeReference {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("custom rules ignored with %s, as llama-quantize ignores them", ignoredBy))
		} else {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("custom rules applied with %s: llama-quantize would have ignored them silently, so its output would differ", ignoredBy))
		}
	}

	posEmbd, tokenTypes := "__missing__", "__missing__"
	if archsWithPosEmbd[model.Arch] {
		posEmbd = "position_embd.weight"
	}
	if archsWithTokenTypes[model.Arch] {
		tokenTypes = "token_types.weight"
	}

	for i, t := range tensors {
		c := Choice{Index: i, Name: t.Name, Shape: t.Shape, Source: t.Type, Type: t.Type}
		name := t.Name
		ne := ne(t.Shape)
		why := copyReason(t, opts, posEmbd, tokenTypes)
		if why != "" {
			c.Why = why
			plan.Choices = append(plan.Choices, c)
			continue
		}

		newType := defaultType
		c.Reason = ReasonDefault
		c.Why = fmt.Sprintf("default type of %s", opts.FileType)
		applyRules := func() error {
			c.RulesConsulted = true
			r, err := budget.Match(opts.Rules, name)
			if r != nil {
				newType = r.Type
				c.Reason, c.Rule, c.RuleApplied = ReasonCustomRule, r, r
				c.Why = fmt.Sprintf("%s matches", r)
			}
			return err
		}
		switch {
		case opts.Pure:
			if ignoredBy != "" && !opts.LikeReference {
				if err := applyRules(); err != nil {
					return nil, err
				}
			}
			if c.Reason == ReasonDefault {
				c.Why = fmt.Sprintf("--pure: default type of %s", opts.FileType)
			}
			if err := qs.fallback(&c, &newType, ne); err != nil {
				return nil, err
			}
		case defaultType.IsQuantized():
			c.RulesConsulted = opts.Rules.Len() > 0
			rule, err := budget.Match(opts.Rules, name)
			if err != nil {
				return nil, err
			}
			res, err := qs.builtinType(newType, name, ne)
			if err != nil {
				return nil, err
			}
			if res.override != "" {
				c.Reason, c.Option = ReasonOverride, res.override
				c.Why = fmt.Sprintf("%s (in the %s rule)", res.override, res.branch)
			} else if res.typ != newType {
				c.Reason = ReasonBuiltin
				c.Why = fmt.Sprintf("built-in %s rule of %s: %s -> %s", res.branch, qs.ftype, newType, res.typ)
			}
			newType = res.typ
			if rule != nil {
				newType = rule.Type
				c.Reason, c.Rule, c.RuleApplied, c.Option = ReasonCustomRule, rule, rule, ""
				c.Why = fmt.Sprintf("%s matches", rule)
			}
			if err := qs.fallback(&c, &newType, ne); err != nil {
				return nil, err
			}
			newType = noInterleavedEmbeddings(&c, name, newType)
		default:
			if ignoredBy != "" && !opts.LikeReference {
				if err := applyRules(); err != nil {
					return nil, err
				}
			}
		}

		// The options the reference applies after the choice, in its order.
		o := opts.Overrides
		override := func(flag string, v *formats.Type, applies bool) {
			if v != nil && applies {
				newType = *v
				c.Reason, c.Option, c.Rule = ReasonOverride, flag, nil
				c.Why = flag
			}
		}
		override("--token-embedding-type", o.TokenEmbedding, name == "token_embd.weight")
		override("--per-layer-token-embedding-type", o.PerLayerTokenEmbedding, name == "per_layer_token_embd.weight")
		override("--output-tensor-type", o.Output, name == "output.weight")
		if opts.CopyOnly && name == opts.ExtraOutputSource && !(o.Output != nil && name == "output.weight") {
			newType = t.Type
			c.Reason, c.Rule = ReasonDefault, nil
			c.Why = "COPY file type (the tensor --extra-output-tensor duplicates)"
		}
		override("--ffn-gate-inp-type", o.FFNGateInp, strings.Contains(name, "ffn_gate_inp.weight"))
		// These compare the whole name with a bare tensor name, so they only
		// act inside the built-in rules above for real models.
		override("--attn-q-type", o.AttnQ, name == "attn_q.weight")
		override("--attn-k-type", o.AttnK, name == "attn_k.weight")
		override("--attn-v-type", o.AttnV, name == "attn_v.weight")
		override("--attn-qkv-type", o.AttnQKV, name == "attn_qkv.weight")
		override("--attn-output-type", o.AttnOutput, name == "attn_output.weight")
		override("--ffn-gate-type", o.FFNGate, name == "ffn_gate")
		override("--ffn-down-type", o.FFNDown, name == "ffn_down")
		override("--ffn-up-type", o.FFNUp, name == "ffn_up")
		if name == "token_embd.weight" {
			newType = noInterleavedEmbeddings(&c, name, newType)
		}

		if newType == t.Type {
			c.Type = t.Type
			c.Why += fmt.Sprintf("; already %s, copied", t.Type)
			c.Reason = ReasonCopied
			c.Quantize = false
			plan.Choices = append(plan.Choices, c)
			continue
		}
		c.Quantize = true
		c.NeedsImatrix = !opts.IgnoreImatrixRules && NeedsImatrix(newType, ft, name)
		if base, rows := interleavedProperties(newType); ne[1]%int64(rows) != 0 {
			c.Fallbacks = append(c.Fallbacks, fmt.Sprintf("%d rows are not a multiple of the %d rows %s interleaves: %s used", ne[1], rows, newType, base))
			newType = base
		}
		c.Type = newType
		plan.Choices = append(plan.Choices, c)
	}
	plan.NFallback = qs.nFallback
	return plan, nil
}

// copyReason says why the reference copies a tensor without quantizing it,
// or "" when it is quantized. Name tests are the reference's.
func copyReason(t gguf.TensorInfo, opts Options, posEmbd, tokenTypes string) string {
	name := t.Name
	switch {
	case name == opts.ExtraOutputSource:
		return "" // the reference's quantize = tensor == output_tensor || quantize
	case typeIsAny(t.Type, formats.I8, formats.I16, formats.I32, formats.I64):
		return "integer tensor"
	case !endsWithWeight(name):
		return "name does not end in \"weight\""
	case nDims(t.Shape) < 2:
		return "1-D tensor"
	case strings.Contains(name, "_norm.weight"):
		return "norm tensor"
	case opts.LeaveOutputTensor && name == "output.weight":
		return "--leave-output-tensor"
	case opts.CopyOnly:
		return "COPY file type"
	case strings.Contains(name, "ffn_gate_inp.weight") && (opts.Overrides.FFNGateInp == nil || *opts.Overrides.FFNGateInp == t.Type):
		return "expert gating tensor (ffn_gate_inp)"
	case name == posEmbd:
		return "position embeddings"
	case name == tokenTypes:
		return "token types"
	case strings.Contains(name, "ssm_conv1d"), strings.Contains(name, "ssm_x.weight"), strings.Contains(name, "ssm_dt.weight"):
		return "small Mamba tensor"
	case strings.Contains(name, "attn_rel_b.weight"):
		return "relative position bias"
	}
	return ""
}

// endsWithWeight is the reference's name.rfind("weight") == name.size() - 6,
// including its unsigned wrap-around: a name of exactly five characters
// passes because both sides are npos.
func endsWithWeight(name string) bool {
	return strings.HasSuffix(name, "weight") || len(name) == 5
}

// fallback applies change_type_if_necessary, recording it.
func (qs *state) fallback(c *Choice, t *formats.Type, ne [4]int64) error {
	working, err := blockFallback(*t, ne[0])
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	if working != *t {
		qs.nFallback++
		c.Fallbacks = append(c.Fallbacks, fmt.Sprintf("rows of %d are not a multiple of %s's block: fallback %s", ne[0], *t, working))
		*t = working
	}
	return nil
}

// noInterleavedEmbeddings replaces an interleaved type for the token
// embeddings by its base type, as the reference does.
func noInterleavedEmbeddings(c *Choice, name string, t formats.Type) formats.Type {
	if name != "token_embd.weight" && name != "per_layer_token_embd.weight" {
		return t
	}
	if base, _ := interleavedProperties(t); base != t {
		what := "token embeddings"
		if name == "per_layer_token_embd.weight" {
			what = "per-layer token embeddings"
		}
		c.Fallbacks = append(c.Fallbacks, fmt.Sprintf("%s cannot use row-interleaved %s: %s used", what, t, base))
		return base
	}
	return t
}

// ConsultedNames lists the tensors whose type the custom rules could
// decide, in order: the names to analyse a rule set against.
func (p *Plan) ConsultedNames() []string {
	var out []string
	for _, c := range p.Choices {
		if c.RulesConsulted {
			out = append(out, c.Name)
		}
	}
	return out
}

// String renders a choice as one planner line.
func (c Choice) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v %s", c.Name, c.Shape, c.Source)
	if c.Quantize {
		fmt.Fprintf(&b, " -> %s", c.Type)
	} else {
		b.WriteString(" (copied)")
	}
	fmt.Fprintf(&b, ": %s", c.Why)
	for _, f := range c.Fallbacks {
		fmt.Fprintf(&b, "; %s", f)
	}
	return b.String()
}

// ParseTypeOption reads the value of a --*-type option (--attn-v-type q8_0)
// in any case. llama-quantize matches these names case-sensitively and
// silently ignores a name it does not know, so warning is non-empty when it
// would have ignored this value.
func ParseTypeOption(flag, value string) (t formats.Type, warning string, err error) {
	t, err = formats.ParseType(value)
	if err != nil {
		return 0, "", fmt.Errorf("recipes: %s: %w", flag, err)
	}
	if value != t.String() {
		warning = fmt.Sprintf("%s %s: llama-quantize only knows the spelling %q and would silently ignore this option", flag, value, t.String())
	}
	return t, warning, nil
}
