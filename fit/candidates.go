package fit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
)

// defaultTypes are the candidate types when none are given: the ik_llama.cpp
// types that are on the error-per-byte frontier of some tensor of the
// models we measured, plus the block-32 types the reference falls back to
// for rows that are not a multiple of 256, and bf16. Slow searches that
// never win (iq3_xxs, iq3_s, iq2_xs, iq4_kss, the trellis types) are left
// out: name them with --types to consider them.
var defaultTypes = typeNames("bf16 q8_0 q6_0 q5_0 iq4_nl q6_K iq6_k iq5_k iq5_ks iq4_k iq4_ks iq4_xs q4_K iq3_k iq3_ks iq2_kl iq2_k iq2_ks iq2_xxs iq1_m iq1_s")

// DefaultTypes returns the default candidates (a new slice each call).
func DefaultTypes() []formats.Type { return slices.Clone(defaultTypes) }

// MainlineTypes returns the candidates mainline llama.cpp also runs (a new
// slice each call).
func MainlineTypes() []formats.Type { return slices.Clone(mainlineTypes) }

var mainlineTypes = typeNames("bf16 q8_0 q5_0 q4_0 iq4_nl q6_K q5_K q4_K iq4_xs q3_K iq3_s iq3_xxs q2_K iq2_s iq2_xs iq2_xxs iq1_m iq1_s")

func typeNames(list string) []formats.Type {
	var out []formats.Type
	for _, w := range strings.Fields(list) {
		t, err := formats.ParseType(w)
		if err != nil {
			panic(err)
		}
		out = append(out, t)
	}
	return out
}

// ParseTypes reads a list of type names separated by commas or spaces; the
// words "default" and "mainline" stand for DefaultTypes and MainlineTypes.
func ParseTypes(list string) ([]formats.Type, error) {
	var out []formats.Type
	seen := map[formats.Type]bool{}
	for _, w := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		var ts []formats.Type
		switch strings.ToLower(w) {
		case "default":
			ts = defaultTypes
		case "mainline":
			ts = mainlineTypes
		default:
			t, err := formats.ParseType(w)
			if err != nil {
				return nil, fmt.Errorf("fit: --types: %w", err)
			}
			ts = []formats.Type{t}
		}
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fit: --types %q names no type", list)
	}
	return out, nil
}

// Candidate is one type a tensor may take.
type Candidate struct {
	Type  formats.Type // the type written (after the reference's fallbacks)
	Bytes int64        // the tensor's bytes in it, as the planner counts them
	Err   float64      // measured relative error (see Stats)
	SE    float64      // its standard error
	Loss  float64      // predicted loss: gain * (Err + floor)
}

// Tensor is one tensor of the model as the fit sees it.
type Tensor struct {
	Index  int
	Name   string
	Shape  []int64
	Source formats.Type
	Class  Class
	Layer  int
	Device string
	Gain   float64
	// Quantized: the recipe decides the tensor's type (false for tensors the
	// reference copies unchanged, norms and the like).
	Quantized bool
	// Pin is the --custom-q rule that fixes the type, if any.
	Pin *recipes.Rule
	// TiedPin is the --custom-q rule of a tensor tied (--tie) to this one,
	// which gives this one the pinned type as its only candidate.
	TiedPin *recipes.Rule
	// Cands are the types the tensor may take, fewest bytes first; a copied
	// or pinned tensor has exactly one.
	Cands []Candidate
}

// Fixed reports whether the fit has no choice for the tensor.
func (t *Tensor) Fixed() bool { return !t.Quantized || t.Pin != nil }

// isCPU reports whether a device name is a CPU buffer (llama.cpp's "CPU",
// and names starting with it): the only devices that run row-interleaved
// types.
func isCPU(device string) bool {
	return len(device) >= 3 && strings.EqualFold(device[:3], "CPU")
}

// model is what the type choice reads of a model: its hyper-parameters and
// tensors (name, shape, type), in file order.
type model struct {
	params  recipes.Model
	tensors []gguf.TensorInfo
}

// describe reads the type choice's view of in.
func describe(in *gguf.Model) (model, error) {
	params, err := recipes.ModelParams(in.Metadata)
	if err != nil {
		return model{}, err
	}
	return model{params: params, tensors: in.Infos()}, nil
}

// selectAll runs the reference's type choice over the whole model with
// rules (first match wins) on top of file type ft.
func (m model) selectAll(ft recipes.FileType, rules *recipes.RuleSet, hasImatrix bool) (*recipes.Plan, error) {
	opts := recipes.Options{FileType: ft, Rules: rules, HasImatrix: hasImatrix}
	return recipes.Select(opts, m.params, m.tensors)
}

// importanceFlags reports for each tensor of in whether the importance
// matrix has data for it.
func importanceFlags(in *gguf.Model, im *imatrix.Matrix) ([]bool, error) {
	out := make([]bool, len(in.Tensors))
	for i, t := range in.Tensors {
		data, _, err := importance(im, t.TensorInfo, formats.Q8_0)
		if err != nil {
			return nil, err
		}
		out[i] = data != nil
	}
	return out, nil
}

// withRule returns pins followed by one rule giving every tensor t.
func withRule(pins *recipes.RuleSet, t formats.Type) *recipes.RuleSet {
	rs := &recipes.RuleSet{}
	rs.Append(pins)
	all, err := recipes.ParseCustomQ(".*=" + t.String())
	if err != nil {
		panic(err) // a type's own name always parses
	}
	rs.Append(all)
	return rs
}

// candidates lists every tensor with the types it may take: each candidate
// type given to every tensor by a rule, as the reference would apply it
// (fallbacks for rows that do not fit the type's blocks or interleaving, no
// interleaved token embeddings; a fallback counts only when it is itself a
// candidate), keeping what the run can produce: no
// row-interleaved type off CPU devices, no type the reference refuses
// without importance data for a tensor that has none (hasData says which
// have some; nil for a run without an importance matrix). device gives
// each tensor's device.
func candidates(m model, hasData []bool, pins *recipes.RuleSet, types []formats.Type, device []string, gains Gains) ([]Tensor, []string, error) {
	hasIm := false
	for _, h := range hasData {
		hasIm = hasIm || h
	}
	if hasData == nil {
		hasData = make([]bool, len(m.tensors))
	}
	// A catch-all rule after the pins marks the tensors rules can decide.
	base, err := m.selectAll(recipes.FileTypeQ8_0, withRule(pins, formats.Q8_0), hasIm)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	out := make([]Tensor, len(m.tensors))
	pinned := make([]bool, pins.Len())
	for i, c := range base.Choices {
		src := m.tensors[i]
		cls, layer := Classify(src.Name)
		t := Tensor{Index: i, Name: src.Name, Shape: src.Shape, Source: src.Type, Class: cls, Layer: layer,
			Device: device[i], Gain: gains.Gain(cls, layer, m.params.NLayer), Quantized: c.RulesConsulted}
		if t.Quantized && c.Rule != nil && c.Rule.Index < pins.Len() {
			t.Pin = c.Rule
			pinned[c.Rule.Index] = true
		}
		if !t.Fixed() && src.Type.IsQuantized() {
			return nil, nil, fmt.Errorf("%w: tensor %s is %s already: fit chooses the types of an unquantized model (bf16, f16 or f32), and quantize does not quantize a tensor again", ErrQuantizedInput, src.Name, src.Type)
		}
		if t.Fixed() {
			bytes, err := c.Type.TensorSize(src.Shape)
			if err != nil {
				return nil, nil, fmt.Errorf("tensor %s as %s: %w", src.Name, c.Type, err)
			}
			t.Cands = []Candidate{{Type: c.Type, Bytes: bytes}}
		}
		// A pin the run cannot produce is refused here, as a candidate
		// type would be left out: measuring it failed in the kernel,
		// after the other tensors' measurements.
		if t.Pin != nil {
			switch {
			case !exact(src.Type, c.Type) && !quantize.Supported(measureType(c.Type)):
				return nil, nil, fmt.Errorf("fit: %s: pinned to %s by %s, a type gquant cannot quantize", src.Name, c.Type, t.Pin)
			case !hasData[i] && (c.NeedsImatrix || c.Type.Known() && mustNeedsImatrix(c.Type)):
				return nil, nil, fmt.Errorf("fit: %s: pinned to %s by %s, which needs importance data, and the run has none for this tensor", src.Name, c.Type, t.Pin)
			}
		}
		out[i] = t
	}
	for k, used := range pinned {
		if !used {
			r := pins.Rules[k]
			warnings = append(warnings, fmt.Sprintf("%s decides no tensor: it matches none, or only tensors an earlier rule decides", r))
		}
	}
	// whyNot says, per tensor, why each type was left out: the error
	// when no type is left.
	whyNot := make([][]string, len(out))
	for _, typ := range types {
		plan, err := m.selectAll(recipes.FileTypeQ8_0, withRule(pins, typ), hasIm)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("type %s left out: %v", typ, err))
			for i := range out {
				whyNot[i] = append(whyNot[i], fmt.Sprintf("%s: %v", typ, err))
			}
			continue
		}
		for i, c := range plan.Choices {
			t := &out[i]
			if t.Fixed() {
				continue
			}
			eff := c.Type
			why := ""
			switch {
			case eff != typ && !slicesContains(types, eff):
				// a fallback to a type not asked for
				why = fmt.Sprintf("the reference writes %s here (%s), which is not a candidate", eff, fallbackWhy(t, typ))
			case eff.IsInterleaved() && !isCPU(t.Device):
				why = fmt.Sprintf("row-interleaved, which runs on CPU devices only, not on %s", t.Device)
			case !hasData[i] && (c.NeedsImatrix || eff.Known() && mustNeedsImatrix(eff)):
				why = "needs importance data, and the run has none for this tensor (give --imatrix)"
			case !exact(t.Source, eff) && !quantize.Supported(measureType(eff)):
				why = "gquant cannot quantize it"
			}
			if why == "" && has(t.Cands, eff) {
				continue
			}
			var bytes int64
			if why == "" {
				if bytes, err = eff.TensorSize(t.Shape); err != nil {
					why = err.Error() // a fallback type that still does not fit the rows
				}
			}
			if why != "" {
				if eff != typ && !strings.Contains(why, eff.String()) {
					why = fmt.Sprintf("as %s: %s", eff, why)
				}
				whyNot[i] = append(whyNot[i], typ.String()+": "+why)
				continue
			}
			t.Cands = append(t.Cands, Candidate{Type: eff, Bytes: bytes})
		}
	}
	for i := range out {
		t := &out[i]
		if !t.Fixed() && len(t.Cands) == 0 {
			return nil, warnings, fmt.Errorf("fit: no candidate type fits tensor %s %v on %s: %s",
				t.Name, t.Shape, t.Device, strings.Join(whyNot[i], "; "))
		}
		sort.SliceStable(t.Cands, func(a, b int) bool { return t.Cands[a].Bytes < t.Cands[b].Bytes })
	}
	return out, warnings, nil
}

// fallbackWhy says why the reference writes another type than typ for t.
func fallbackWhy(t *Tensor, typ formats.Type) string {
	switch {
	case typ.IsInterleaved() && t.Class == ClassTokenEmbd:
		return "token embeddings are never interleaved"
	case len(t.Shape) > 0 && typ.BlockSize() > 0 && t.Shape[0]%int64(typ.BlockSize()) != 0:
		return fmt.Sprintf("rows of %d are no multiple of its blocks of %d", t.Shape[0], typ.BlockSize())
	case typ.Interleave() > 1 && len(t.Shape) > 1 && t.Shape[1]%int64(typ.Interleave()) != 0:
		return fmt.Sprintf("%d rows are no multiple of its interleaving of %d", t.Shape[1], typ.Interleave())
	}
	return "the reference's fallback"
}

func mustNeedsImatrix(t formats.Type) bool {
	info, _ := t.Info()
	return info.NeedsImatrix
}

func has(cs []Candidate, t formats.Type) bool {
	for _, c := range cs {
		if c.Type == t {
			return true
		}
	}
	return false
}
