package imatrix

import (
	"fmt"
	"strings"

	"github.com/gquant/gquant/formats"
)

// PlannedTensor is one tensor of a quantize plan, as Check needs it: the
// caller decides the types (recipes.Select) and passes them here, so this
// package stays free of the planner.
type PlannedTensor struct {
	Name     string
	Shape    []int64
	Type     formats.Type // the type it will be quantized to
	Quantize bool         // false for tensors copied unchanged (norms, ...)
	// NeedsImatrix: the quantizer refuses this tensor without importance
	// data (recipes.Choice.NeedsImatrix).
	NeedsImatrix bool
}

// Severity ranks a finding.
type Severity int

const (
	Info    Severity = iota // worth knowing, harmless
	Warning                 // the quantize runs but the result may be worse
	Error                   // the quantize will fail
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// MarshalText writes the severity by name, for JSON reports.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (s *Severity) UnmarshalText(b []byte) error {
	for _, v := range []Severity{Info, Warning, Error} {
		if v.String() == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("imatrix: unknown severity %q", b)
}

// Finding kinds.
const (
	KindRefused   = "refused"       // no data for a type that cannot do without
	KindNoData    = "no-data"       // no data; the type is quantized without weighting
	KindSize      = "size"          // the entry does not fit the tensor
	KindEmpty     = "empty-matrix"  // experts / heads that never received data
	KindMLA       = "mla"           // MLA attention: data borrowed or absent by design
	KindNotNeeded = "not-needed"    // token_embd: never has data, needs none
	KindUnused    = "unused-entry"  // an entry no tensor of the model uses
	KindAllZero   = "all-zero"      // a 2-D entry whose values are all zero
	KindFallback  = "borrowed-data" // data found under another name (ffn_up for ffn_gate, ...)
)

// Finding is one observation about a tensor or entry.
type Finding struct {
	Severity Severity     `json:"severity"`
	Kind     string       `json:"kind"`
	Tensor   string       `json:"tensor,omitempty"`   // model tensor ("" for an unused entry)
	Type     formats.Type `json:"-"`                  // the tensor's planned type
	Entry    string       `json:"entry,omitempty"`    // importance entry used or examined ("" for none)
	Matrices []int        `json:"matrices,omitempty"` // for KindEmpty: the matrices without data
	Of       int          `json:"of,omitempty"`       // for KindEmpty: how many matrices the tensor has
	Message  string       `json:"message"`
}

func (f Finding) String() string {
	name := f.Tensor
	if name == "" {
		name = f.Entry
	}
	return fmt.Sprintf("%-7s %s: %s", f.Severity, name, f.Message)
}

// CheckReport is the outcome of Check.
type CheckReport struct {
	Findings []Finding
	Tensors  int // quantized tensors examined
	WithData int // of those, how many get importance data
}

// Failed reports whether the quantize would stop with an error.
func (r *CheckReport) Failed() bool { return r.Count(Error) > 0 }

// Count returns how many findings have severity s.
func (r *CheckReport) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Check examines m against a quantize plan before any work is done, the way
// the quantizer will use it: it looks entries up with the quantizer's name
// fallbacks, checks their sizes (ne0 x ne2 values), finds experts and heads
// without data and the tensors the quantizer will refuse without data.
// An MLA model's attn_v_b may use an attn_kv_b entry (the same activations)
// for each of its heads; attn_k_b has an entry only in a file computed with
// MLA attention.
func Check(m *Matrix, plan []PlannedTensor) *CheckReport {
	r := &CheckReport{}
	add := func(f Finding) { r.Findings = append(r.Findings, f) }
	used := map[string]bool{}
	for _, t := range plan {
		e, from, ok := m.Find(t.Name)
		if ok {
			used[from] = true // even for tensors copied as they are
		}
		if !t.Quantize {
			continue
		}
		r.Tensors++
		f := Finding{Tensor: t.Name, Type: t.Type, Entry: from}
		if t.Name == "token_embd.weight" {
			// Token embeddings are looked up, never multiplied: no
			// calibration run sees activations for them.
			f.Severity, f.Kind, f.Message = Info, KindNotNeeded, "token embeddings never have importance data and need none"
			if ok {
				f.Message = fmt.Sprintf("has entry %s (the quantizer ignores it if the size does not fit)", from)
			}
			add(f)
			continue
		}
		ne0, ne2 := int64(1), int64(1)
		if len(t.Shape) > 0 {
			ne0 = t.Shape[0]
		}
		for _, d := range t.Shape[min(2, len(t.Shape)):] {
			ne2 *= d
		}
		if !ok {
			f.Entry = ""
			f.Severity, f.Kind = Warning, KindNoData
			f.Message = fmt.Sprintf("no importance data: quantized as %s without weighting", t.Type)
			if t.NeedsImatrix {
				f.Severity, f.Kind = Error, KindRefused
				f.Message = fmt.Sprintf("no importance data, and the quantizer refuses %s without it", t.Type)
			}
			if strings.HasSuffix(t.Name, ".attn_k_b.weight") {
				f.Message += "; attn_k_b exists only for MLA attention: a file computed with standard attention has no data for it (attn_v_b can borrow attn_kv_b's, attn_k_b cannot)"
			}
			add(f)
			continue
		}
		n := int64(len(e.Sums))
		switch {
		case n == ne0*ne2:
		case n == ne0 && ne2 > 1 && from != t.Name && strings.HasSuffix(t.Name, ".attn_v_b.weight"):
			add(Finding{Severity: Info, Kind: KindMLA, Tensor: t.Name, Type: t.Type, Entry: from,
				Message: fmt.Sprintf("MLA: the file was computed with standard attention; %s sees the same activations, its %d values are used for each of the %d heads", from, n, ne2)})
			r.WithData++
			continue
		default:
			f.Severity, f.Kind = Error, KindSize
			f.Message = fmt.Sprintf("entry %s has %d values, the tensor needs %d x %d = %d", from, n, ne0, ne2, ne0*ne2)
			if ne0 > 0 && n%ne0 == 0 {
				f.Message += fmt.Sprintf(" (the entry holds %d matrices of %d: computed for a model with a different expert or head count?)", n/ne0, ne0)
			} else {
				f.Message += " (the file was computed for a different model)"
			}
			add(f)
			continue
		}
		r.WithData++
		if from != t.Name {
			add(Finding{Severity: Info, Kind: KindFallback, Tensor: t.Name, Type: t.Type, Entry: from,
				Message: fmt.Sprintf("uses the data of %s (same input activations)", from)})
		}
		st := e.Stats(int(ne2))
		switch {
		case len(st.Empty) > 0 && st.Matrices > 1:
			msg := NoDataText(t.Name, st.Empty, st.Matrices)
			if from != t.Name {
				msg += " in " + from
			}
			if len(st.Uniform) == len(st.Empty) {
				msg += fmt.Sprintf(": quantized as %s with uniform importance there (a GGUF file's matrix without calls counts as 1s, as llama.cpp's quantize takes it)", t.Type)
			} else if info, _ := t.Type.Info(); info.ZeroImportanceFails {
				msg += fmt.Sprintf(": the reference's %s kernel gives NaN or unreproducible output on an all-zero importance slice (gquant uses uniform importance there)", t.Type)
			} else {
				msg += fmt.Sprintf(": quantized as %s with all-zero importance there", t.Type)
			}
			add(Finding{Severity: Warning, Kind: KindEmpty, Tensor: t.Name, Type: t.Type, Entry: from, Matrices: st.Empty, Of: st.Matrices, Message: msg})
		case len(st.Empty) > 0:
			add(Finding{Severity: Warning, Kind: KindAllZero, Tensor: t.Name, Type: t.Type, Entry: from,
				Message: fmt.Sprintf("entry %s is all zeros: the tensor is quantized without weighting", from)})
		}
	}
	for _, e := range m.Entries {
		if !used[e.Name] {
			used[e.Name] = true // report duplicates once
			add(Finding{Severity: Info, Kind: KindUnused, Entry: e.Name,
				Message: "no tensor of the model uses this entry (a file for another model or architecture variant?)"})
		}
	}
	return r
}

// NoDataText says which matrices of an entry or tensor never received
// data, numbered from 0 as the model's experts and heads are: "expert 5 of
// 8 has no data", "experts 3 and 5 of 8 have no data" (heads for a
// tensor that is not an expert tensor).
func NoDataText(name string, empty []int, of int) string {
	what, verb := "head", "has"
	if IsExpertEntry(name) {
		what = "expert"
	}
	if len(empty) != 1 {
		what, verb = what+"s", "have"
	}
	return fmt.Sprintf("%s %s of %d %s no data", what, intList(empty), of, verb)
}

// intList renders 1, 2 and 5 style lists.
func intList(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
