// Package planner answers, from headers alone, what a quantize run will
// produce before any work is done: each tensor's type and the rule or
// built-in choice behind it, the exact size of every output file, what each
// custom rule matched (and matched by accident), how many bytes each device
// will hold under llama.cpp-style placement rules, and whether that fits a
// budget.
//
// The type choice and file layout come from pipeline.Build, so the sizes
// reported are the sizes the real run writes, to the byte.
package planner

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// Options are what the planner adds to a quantize plan.
type Options struct {
	// Placement puts tensors on devices (nil: no per-device report).
	Placement *Placement
	// Budgets are checked against the bytes each device holds; each must
	// name a device a placement rule uses.
	Budgets []Budget
}

// Tensor is the plan for one tensor.
type Tensor struct {
	Name        string   `json:"name"`
	Shape       []int64  `json:"shape"`
	Source      string   `json:"source_type"`
	Type        string   `json:"type"`
	Quantized   bool     `json:"quantized"`      // converted (false: copied unchanged)
	DecidedBy   string   `json:"decided_by"`     // custom rule, option, built-in, default, copied, repack
	Rule        int      `json:"rule,omitempty"` // the deciding custom rule, from 1
	Why         string   `json:"why"`
	Fallbacks   []string `json:"fallbacks,omitempty"`
	Weights     int64    `json:"weights"`
	SourceBytes int64    `json:"source_bytes"`
	Bytes       int64    `json:"bytes"`
	File        int      `json:"file"` // index in Report.Files
	Device      string   `json:"device,omitempty"`
	PlacedBy    int      `json:"placed_by,omitempty"` // the placement rule, from 1
	Imatrix     string   `json:"imatrix,omitempty"`   // importance matrix entry used
}

// File is one output file.
type File struct {
	Path        string `json:"path"`
	Bytes       int64  `json:"bytes"` // exact file size
	Tensors     int    `json:"tensors"`
	TensorBytes int64  `json:"tensor_bytes"`
	// Overhead is header, metadata and alignment padding: Bytes - TensorBytes.
	Overhead int64 `json:"overhead_bytes"`
	// Skipped: the file exists and --partial-requant leaves it alone.
	Skipped bool `json:"skipped,omitempty"`
	// OtherPart: another run writes the file (--only-shards).
	OtherPart bool `json:"other_part,omitempty"`
}

// Shadow is a tensor a rule matches that an earlier rule decides.
type Shadow struct {
	Name     string `json:"name"`
	By       int    `json:"by"`        // the deciding rule, from 1
	Type     string `json:"type"`      // the type the deciding rule gives
	SameType bool   `json:"same_type"` // the shadowed rule would have given the same type
}

// Unintended is a match inside a name component.
type Unintended struct {
	Name  string `json:"name"`
	Match string `json:"match"` // the matched text
	Won   bool   `json:"won"`   // this rule decided the tensor
}

// RuleUse is what one custom rule does.
type RuleUse struct {
	Rule    int    `json:"rule"` // from 1
	Where   string `json:"where"`
	Pattern string `json:"pattern"`
	Type    string `json:"type"`
	// Tensors and Bytes count the tensors whose type this rule decided.
	Tensors int   `json:"tensors"`
	Bytes   int64 `json:"bytes"`
	// Overridden are tensors the rule matched first but a --*-type option
	// then decided.
	Overridden []string     `json:"overridden,omitempty"`
	Shadowed   []Shadow     `json:"shadowed,omitempty"`
	Unintended []Unintended `json:"unintended,omitempty"`
	Suggestion string       `json:"suggestion,omitempty"`
	Unused     bool         `json:"unused,omitempty"` // matches no tensor
}

// Device is what one device holds.
type Device struct {
	Device  string `json:"device"` // "" for tensors no placement rule matches
	Tensors int    `json:"tensors"`
	Bytes   int64  `json:"bytes"`
	// Budget is set when a budget was given for the device.
	Budget *BudgetCheck `json:"budget,omitempty"`
}

// BudgetCheck is a device's bytes against its budget.
type BudgetCheck struct {
	Text   string `json:"text"` // as given ("23.5GiB")
	Bytes  int64  `json:"bytes"`
	Margin int64  `json:"margin"` // Bytes minus what the device holds; negative when over
	Fits   bool   `json:"fits"`
}

// TypeUse is the total for one output type.
type TypeUse struct {
	Type    string  `json:"type"`
	Tensors int     `json:"tensors"`
	Weights int64   `json:"weights"`
	Bytes   int64   `json:"bytes"`
	BPW     float64 `json:"bits_per_weight"`
}

// Totals sums the whole plan.
type Totals struct {
	Bytes       int64   `json:"bytes"` // all output files
	Files       int     `json:"files"`
	TensorBytes int64   `json:"tensor_bytes"`
	Weights     int64   `json:"weights"`
	BPW         float64 `json:"bits_per_weight"` // tensor bits per weight
	SourceBytes int64   `json:"source_bytes"`    // the input's tensor data
	InputBytes  int64   `json:"input_bytes"`     // the input files
}

// Report is the dry-run plan of a quantize run.
type Report struct {
	Input    string    `json:"input"`
	FileType string    `json:"file_type"`
	Tensors  []Tensor  `json:"tensors"`
	Files    []File    `json:"files"`
	Rules    []RuleUse `json:"rules,omitempty"`
	// Unmatched counts the tensors the rules were consulted for that no
	// rule matches: the built-in choice decides them.
	Unmatched int        `json:"unmatched_by_rules,omitempty"`
	Placement []PlaceUse `json:"placement,omitempty"`
	Devices   []Device   `json:"devices,omitempty"`
	Types     []TypeUse  `json:"types"`
	Total     Totals     `json:"total"`
	Warnings  []string   `json:"warnings,omitempty"`
}

// Fits reports whether every budgeted device fits (true without budgets).
func (r *Report) Fits() bool {
	for _, d := range r.Devices {
		if d.Budget != nil && !d.Budget.Fits {
			return false
		}
	}
	return true
}

// New makes the report of plan, built by pipeline.Build from in.
func New(in *gguf.Model, plan *pipeline.Plan, opts Options) (*Report, error) {
	if len(plan.Sizes) != len(plan.Outputs) {
		return nil, errors.New("planner: plan has no file sizes")
	}
	r := &Report{Input: in.Path, FileType: plan.Selection.FileType.String(),
		Warnings: append([]string(nil), plan.Warnings...)}
	r.Tensors = make([]Tensor, len(plan.Tensors))
	names := make([]string, len(plan.Tensors))
	bytes := make([]int64, len(plan.Tensors))
	for i, tp := range plan.Tensors {
		// Index is the input tensor's: --extra-output-tensor adds a tensor
		// made from another, so plan and input positions can differ.
		if tp.Index < 0 || tp.Index >= len(in.Tensors) || tp.Output < 0 || tp.Output >= len(plan.Outputs) {
			return nil, fmt.Errorf("planner: tensor %s does not belong to this model and plan", tp.Name)
		}
		src := in.Tensors[tp.Index]
		t := Tensor{Name: tp.Name, Shape: tp.Shape, Source: tp.Source.String(), Type: tp.Type.String(),
			Quantized: tp.Quantize, DecidedBy: tp.Reason.String(), Why: tp.Why, Fallbacks: tp.Fallbacks,
			Weights: src.Elements(), SourceBytes: src.Size, Bytes: tp.Bytes, File: tp.Output, Imatrix: tp.ImatrixFrom}
		if tp.Rule != nil {
			t.Rule = tp.Rule.Index + 1
		}
		r.Tensors[i] = t
		names[i], bytes[i] = tp.Name, tp.Bytes
		r.Total.TensorBytes += tp.Bytes
		r.Total.Weights += t.Weights
	}
	for _, t := range in.Tensors {
		r.Total.SourceBytes += t.Size
	}
	r.Total.InputBytes = in.Size()
	if r.Total.Weights > 0 {
		r.Total.BPW = float64(r.Total.TensorBytes) * 8 / float64(r.Total.Weights)
	}

	r.Files = make([]File, len(plan.Outputs))
	for s, o := range plan.Outputs {
		r.Files[s] = File{Path: o.Path, Bytes: plan.Sizes[s], Skipped: o.Skip && !o.Elsewhere, OtherPart: o.Elsewhere}
	}
	for _, t := range r.Tensors {
		f := &r.Files[t.File]
		f.Tensors++
		f.TensorBytes += t.Bytes
	}
	for s := range r.Files {
		f := &r.Files[s]
		f.Overhead = f.Bytes - f.TensorBytes
		r.Total.Bytes += f.Bytes
	}
	r.Total.Files = len(r.Files)

	// The rule analysis and the placement search every rule in every
	// name: one time budget for both (a pathological regex stops the plan
	// with an error naming it instead of taking minutes).
	budget := recipes.NewBudget(0)
	if err := r.rules(plan, budget); err != nil {
		return nil, err
	}
	r.types()
	if err := r.place(names, bytes, opts, budget); err != nil {
		return nil, err
	}
	return r, nil
}

// rules reports each custom rule: what it decided, what it lost to earlier
// rules and what it probably matched by accident.
func (r *Report) rules(plan *pipeline.Plan, budget *recipes.Budget) error {
	rs := plan.Selection.Rules
	if rs.Len() == 0 {
		return nil
	}
	consulted := plan.Selection.ConsultedNames()
	if len(consulted) == 0 {
		return nil
	}
	a, err := recipes.Analyze(rs, consulted, budget)
	if err != nil {
		return err
	}
	r.Unmatched = len(a.Unmatched)
	typeOf := make(map[string]string, len(r.Tensors))
	for _, t := range r.Tensors {
		typeOf[t.Name] = t.Type
	}
	decided := make(map[string]int, len(r.Tensors)) // tensor -> deciding rule, from 1
	for _, t := range r.Tensors {
		if t.Rule > 0 {
			decided[t.Name] = t.Rule
		}
	}
	r.Rules = make([]RuleUse, len(a.Rules))
	for i, rep := range a.Rules {
		rule := rep.Rule
		u := RuleUse{Rule: rule.Index + 1, Where: rule.Where(), Pattern: rule.Pattern, Type: rule.Type.String(),
			Suggestion: rep.Suggestion}
		for _, name := range rep.Won {
			if decided[name] != u.Rule {
				u.Overridden = append(u.Overridden, name)
			}
		}
		for _, s := range rep.Shadowed {
			u.Shadowed = append(u.Shadowed, Shadow{Name: s.Name, By: s.Winner.Index + 1, Type: s.Winner.Type.String(),
				SameType: s.Winner.Type == rule.Type})
		}
		for _, x := range rep.Unintended {
			u.Unintended = append(u.Unintended, Unintended{Name: x.Name, Match: x.Name[x.Start:x.End], Won: x.Won})
		}
		u.Unused = len(rep.Won) == 0 && len(rep.Shadowed) == 0
		r.Rules[i] = u
	}
	for _, t := range r.Tensors {
		if t.Rule > 0 && t.Rule <= len(r.Rules) {
			r.Rules[t.Rule-1].Tensors++
			r.Rules[t.Rule-1].Bytes += t.Bytes
		}
	}
	for _, u := range r.Rules {
		where := fmt.Sprintf("rule %d (%s) %s=%s", u.Rule, u.Where, u.Pattern, u.Type)
		switch {
		case u.Unused:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s matches no tensor", where))
		case u.Tensors == 0 && len(u.Overridden) == 0:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s decides nothing: every tensor it matches (%d) is decided by an earlier rule", where, len(u.Shadowed)))
		}
		if n := countDifferent(u.Shadowed); n > 0 {
			first := firstDifferent(u.Shadowed)
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s loses %d tensor(s) to earlier rules that give another type, e.g. %s gets %s from rule %d",
				where, n, first.Name, first.Type, first.By))
		}
		if len(u.Unintended) > 0 {
			ex := u.Unintended[0]
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s probably matches tensors you did not mean: %d match(es) inside a name component, e.g. %q in %s; anchor it: %s",
				where, len(u.Unintended), ex.Match, ex.Name, u.Suggestion))
		}
	}
	return nil
}

func countDifferent(ss []Shadow) int {
	n := 0
	for _, s := range ss {
		if !s.SameType {
			n++
		}
	}
	return n
}

func firstDifferent(ss []Shadow) Shadow {
	for _, s := range ss {
		if !s.SameType {
			return s
		}
	}
	return Shadow{}
}

// types sums bytes and weights per output type, largest first.
func (r *Report) types() {
	idx := map[string]int{}
	for _, t := range r.Tensors {
		i, ok := idx[t.Type]
		if !ok {
			i = len(r.Types)
			idx[t.Type] = i
			r.Types = append(r.Types, TypeUse{Type: t.Type})
		}
		u := &r.Types[i]
		u.Tensors++
		u.Weights += t.Weights
		u.Bytes += t.Bytes
	}
	for i := range r.Types {
		if u := &r.Types[i]; u.Weights > 0 {
			u.BPW = float64(u.Bytes) * 8 / float64(u.Weights)
		}
	}
	sort.SliceStable(r.Types, func(i, j int) bool { return r.Types[i].Bytes > r.Types[j].Bytes })
}

// place assigns devices and checks budgets.
func (r *Report) place(names []string, bytes []int64, opts Options, budget *recipes.Budget) error {
	if err := CheckBudgets(opts.Budgets); err != nil {
		return err
	}
	p := opts.Placement
	if p.Len() == 0 {
		switch len(opts.Budgets) {
		case 0:
			return nil
		case 1:
			// One budget and no rules: everything on that device, as
			// gquant fit reads the same options.
			p = &Placement{}
			if err := p.AddFlag(".*=" + opts.Budgets[0].Device); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: without placement rules give exactly one budget (the device everything goes to), or place tensors with --place 'exps=CPU' --place '.*=GPU'", ErrBadBudget)
		}
	}
	device, by, uses, err := p.assign(names, bytes, budget)
	if err != nil {
		return err
	}
	r.Placement = uses
	for _, u := range uses {
		if u.Tensors == 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("placement %s matches no tensor", u.Rule))
		}
	}
	devIndex := map[string]int{}
	for _, d := range p.Devices() {
		devIndex[d] = len(r.Devices)
		r.Devices = append(r.Devices, Device{Device: d})
	}
	unplaced := -1
	for i := range r.Tensors {
		t := &r.Tensors[i]
		t.Device = device[i]
		if by[i] >= 0 {
			t.PlacedBy = by[i] + 1
			d := &r.Devices[devIndex[device[i]]]
			d.Tensors++
			d.Bytes += t.Bytes
			continue
		}
		if unplaced < 0 {
			unplaced = len(r.Devices)
			r.Devices = append(r.Devices, Device{})
		}
		r.Devices[unplaced].Tensors++
		r.Devices[unplaced].Bytes += t.Bytes
	}
	if unplaced >= 0 {
		d := r.Devices[unplaced]
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d tensor(s), %d bytes, match no placement rule: llama.cpp puts them where -ngl says; end the rules with '.*=DEVICE' to count them", d.Tensors, d.Bytes))
	}
	for _, b := range opts.Budgets {
		i, ok := devIndex[b.Device]
		if !ok {
			return fmt.Errorf("%w: budget %s=%s: no placement rule puts anything on %s (devices: %v)", ErrBadBudget, b.Device, b.Text, b.Device, p.Devices())
		}
		d := &r.Devices[i]
		d.Budget = &BudgetCheck{Text: b.Text, Bytes: b.Bytes, Margin: b.Bytes - d.Bytes, Fits: d.Bytes <= b.Bytes}
	}
	return nil
}
