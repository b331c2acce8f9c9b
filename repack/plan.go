package repack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/stdregex"
	"github.com/gquant/gquant/recipes"
	"github.com/gquant/gquant/splitter"
)

// Sentinel errors, for errors.Is. Messages carry the detail.
var (
	// ErrNothingToDo is returned by NewPlan when no tensor would change.
	ErrNothingToDo = errors.New("repack: nothing to do")
	// ErrAlreadyRepacked is returned (together with ErrNothingToDo) when
	// there is nothing to repack because the model already is: its
	// general.file_type is a row-interleaved one or its tensors are.
	ErrAlreadyRepacked = errors.New("repack: model is already repacked")
	// ErrPattern is returned for a pattern that is not a valid regular expression.
	ErrPattern = errors.New("repack: bad pattern")
	// ErrNoMatch is returned for a pattern that matches no tensor name
	// (unless Options.Lenient).
	ErrNoMatch = errors.New("repack: pattern matches no tensor")
	// ErrNotRepackable is returned for a pattern whose tensors all have to
	// stay as they are, e.g. because their type has no row-interleaved
	// form (unless Options.Lenient).
	ErrNotRepackable = errors.New("repack: tensors cannot be converted")
	// ErrPlan is returned by Run for a plan made for another model.
	ErrPlan = errors.New("repack: plan does not fit the model")
)

// Options says what to convert. The zero value repacks every tensor that
// can be, the way llama-quantize --repack does.
type Options struct {
	// Patterns, when not empty, limits the conversion to tensors whose
	// name one of them matches. They are ECMAScript regular expressions
	// searched anywhere in the name (std::regex_search, as the reference's
	// --repack-pattern), so "ffn_down" matches blk.3.ffn_down_exps.weight.
	Patterns []string
	// Undo converts row-interleaved tensors back to their base type instead.
	Undo bool
	// Overwrite lets the outputs replace files at their paths (--force).
	// Without it a file there is never replaced, not even one that
	// appeared during the run (gguf.CreateOptions.NoReplace).
	Overwrite bool
	// Lenient makes a pattern that matches no tensor, or only tensors that
	// must stay as they are, a warning (Plan.Warnings) instead of an error,
	// as llama-quantize --repack-pattern treats them.
	Lenient bool
	// Merge writes one file even when the input is a shard set (what
	// llama-quantize --repack does without --keep-split). By default a
	// shard set gives a shard set with the same tensors in each shard.
	Merge bool
	// Split, when set, writes the output as shards planned the way
	// llama-gguf-split plans them (out is then their prefix); it overrides
	// Merge and the input's shard layout.
	Split *splitter.Limits
	// Metadata are keys set in the outputs' metadata after the split keys
	// are dropped and before general.file_type, as llama-quantize --repack
	// sets its --override-kv and importance matrix keys.
	Metadata []gguf.KV
	// Threads is the number of goroutines shuffling bytes (default GOMAXPROCS).
	Threads int
	// Log, when set, gets one line per tensor as it is written.
	Log io.Writer
	// Context, when set, stops Run when it is done (an interrupt); the
	// outputs are then left unwritten.
	Context context.Context
	// Beside, when set, names the files that describe an output file (its
	// sidecar, pipeline.SidecarPath): they are removed before the file is
	// replaced, so that none describes a file that is not there. Run writes
	// none itself: a repack's bytes are no quantizer's output.
	Beside func(output string) []string
}

func (o *Options) beside(path string) []string {
	if o.Beside == nil {
		return nil
	}
	return o.Beside(path)
}

// TensorPlan is what happens to one tensor.
type TensorPlan struct {
	// Index is the tensor's position in the model's Tensors.
	Index int
	Name  string
	Shard int
	Shape []int64
	// From is the tensor's type; To the type it is written as (From when
	// it stays as it is).
	From, To formats.Type
	// Reason says why it is converted or why it stays.
	Reason string
	// InBytes and OutBytes are its data sizes before and after.
	InBytes, OutBytes int64
}

// Converted reports whether the tensor changes type.
func (t TensorPlan) Converted() bool { return t.From != t.To }

// Plan is the outcome of NewPlan: what happens to each tensor and to
// general.file_type. Run carries it out.
type Plan struct {
	Options  Options
	Tensors  []TensorPlan
	FileType FileTypeChange
	// Converted is the number of tensors that change type.
	Converted int
	// InputRepacked reports that the input's general.file_type is already
	// a row-interleaved file type (the reference's is_repacked).
	InputRepacked bool
	// Warnings are things the user should know that do not stop the run.
	Warnings []string

	shards int // shard count of the input
}

// forbidden names are never repacked by the reference (iqk
// is_forbidden_tensor): token embeddings are looked up row by row, not
// multiplied, so an interleaved layout would only hurt.
func forbidden(name string) bool {
	return name == "token_embd.weight" || name == "per_layer_token_embd.weight"
}

// RepackableTypeNames lists the base types a repack converts, with their
// targets, for messages and help texts: "q2_K->q2_k_r4, ...". Pairs whose
// interleaver this build lacks are left out.
func RepackableTypeNames() string {
	var parts []string
	for _, b := range formats.RepackableTypes() {
		t, _ := formats.RepackTarget(b)
		if formats.CanInterleave(t) {
			parts = append(parts, b.String()+"->"+t.String())
		}
	}
	return strings.Join(parts, ", ")
}

// patternTimeout bounds one search of a --pattern regex in a tensor name.
const patternTimeout = 2 * time.Second

type pattern struct {
	text      string
	re        *regexp2.Regexp
	matched   int      // tensor names it matches
	converted int      // of which converted
	stuck     []string // examples of matched tensors that stay, with the reason
}

func compilePatterns(texts []string) ([]*pattern, error) {
	var out []*pattern
	for _, s := range texts {
		re, err := stdregex.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrPattern, s, err)
		}
		// A search that backtracks for seconds on a tensor name is an error
		// (recipes.Budget), as for --custom-q rules.
		re.MatchTimeout = patternTimeout
		out = append(out, &pattern{text: s, re: re})
	}
	return out, nil
}

// NewPlan decides, tensor by tensor, what a repack (or, with Options.Undo,
// an undo) of m does, following the reference's --repack: a tensor is
// repacked when formats.RepackTarget has a row-interleaved form of its type
// that this build can produce, its rows per matrix (ne1) are a multiple of
// that form's interleave count, it is not token_embd.weight or
// per_layer_token_embd.weight, and, when patterns are given, one of them
// matches its name. Undo converts every row-interleaved tensor (that
// patterns select) back to its base type.
//
// When nothing would change, NewPlan returns the plan together with an
// error wrapping ErrNothingToDo (and ErrAlreadyRepacked where that is why),
// so that a dry run can still show it.
func NewPlan(m *gguf.Model, opts Options) (*Plan, error) {
	pats, err := compilePatterns(opts.Patterns)
	if err != nil {
		return nil, err
	}
	p := &Plan{Options: opts, shards: len(m.Shards)}
	if p.FileType, err = fileTypeChange(m, opts.Undo); err != nil {
		return nil, err
	}
	p.InputRepacked = p.FileType.Present && IsRepackedFileType(p.FileType.From)

	interleaved := 0
	budget := recipes.NewBudget(0)
	for i, t := range m.Tensors {
		if t.Type.NotLoaded() {
			// llama-quantize --repack loads every tensor with its loader's
			// check, which refuses the type whatever the bytes.
			return nil, fmt.Errorf("tensor %s in %s: %w: it is %s", t.Name, m.Shards[t.Shard].Path, formats.ErrNotLoaded, t.Type)
		}
		tp := TensorPlan{Index: i, Name: t.Name, Shard: t.Shard, Shape: t.Shape, From: t.Type, To: t.Type, InBytes: t.Size}
		if t.Type.IsInterleaved() {
			interleaved++
		}
		target, why := decide(t.TensorInfo, opts.Undo)
		var matchedBy []*pattern
		for _, pat := range pats {
			found, err := budget.Search(pat.re, fmt.Sprintf("--pattern %q", pat.text), t.Name)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrPattern, err)
			}
			if found != nil {
				pat.matched++
				matchedBy = append(matchedBy, pat)
			}
		}
		switch {
		case target == t.Type:
			tp.Reason = why
			for _, pat := range matchedBy {
				if len(pat.stuck) < 4 {
					pat.stuck = append(pat.stuck, fmt.Sprintf("%s (%s: %s)", t.Name, t.Type, why))
				}
			}
		case len(pats) > 0 && len(matchedBy) == 0:
			tp.Reason = "not matched by the patterns"
		default:
			tp.To, tp.Reason = target, why
			for _, pat := range matchedBy {
				pat.converted++
			}
		}
		if tp.Converted() {
			p.Converted++
			tp.OutBytes, err = tp.To.TensorSize(t.Shape)
			if err != nil {
				return nil, fmt.Errorf("repack: tensor %q as %s: %w", t.Name, tp.To, err)
			}
		} else {
			tp.OutBytes = t.Size
		}
		p.Tensors = append(p.Tensors, tp)
	}

	var patternErrs []error
	for _, pat := range pats {
		var e error
		switch {
		case pat.matched == 0:
			e = fmt.Errorf("%w: %q matches none of the %d tensor names (they look like %q)", ErrNoMatch, pat.text, len(m.Tensors), exampleName(m))
		case pat.converted == 0:
			what := "repacked (repackable: " + RepackableTypeNames() + ")"
			if opts.Undo {
				what = "converted back (only row-interleaved types with a de-interleaver can)"
			}
			e = fmt.Errorf("%w: %q matches %d tensors, none of which can be %s: %s", ErrNotRepackable, pat.text, pat.matched, what, strings.Join(pat.stuck, "; "))
		}
		if e == nil {
			continue
		}
		if opts.Lenient {
			p.Warnings = append(p.Warnings, e.Error())
		} else {
			patternErrs = append(patternErrs, e)
		}
	}
	if len(patternErrs) > 0 {
		return p, errors.Join(patternErrs...)
	}

	if p.Converted == 0 {
		return p, p.nothingToDo(interleaved)
	}
	if !opts.Undo && (p.InputRepacked || interleaved > 0) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the input is already partly repacked (general.file_type %s, %d row-interleaved tensors); repacking the %d tensors still in base types", p.FileType.From, interleaved, p.Converted))
	}
	return p, nil
}

// decide returns the type a tensor is converted to, or its own type, and why.
func decide(t gguf.TensorInfo, undo bool) (formats.Type, string) {
	ne0 := 1
	if len(t.Shape) > 0 {
		ne0 = int(t.Shape[0])
	}
	if undo {
		switch {
		case !t.Type.IsInterleaved():
			return t.Type, "not row-interleaved"
		case !formats.CanInterleave(t.Type):
			return t.Type, fmt.Sprintf("no de-interleaver for %s in this build", t.Type)
		}
		if err := formats.Deinterleave(t.Type, ne0, nil, nil); err != nil {
			return t.Type, err.Error()
		}
		return t.Type.Base(), fmt.Sprintf("%s -> %s", t.Type, t.Type.Base())
	}
	target, ok := formats.RepackTarget(t.Type)
	switch {
	case t.Type.IsInterleaved():
		return t.Type, "already row-interleaved"
	case forbidden(t.Name):
		return t.Type, "token embeddings are never repacked"
	case !ok:
		return t.Type, fmt.Sprintf("%s has no row-interleaved form", t.Type)
	case !formats.CanInterleave(target):
		return t.Type, fmt.Sprintf("no interleaver for %s in this build", target)
	}
	if _, n, _ := gguf.Dims(t.Shape); n%int64(target.Interleave()) != 0 {
		return t.Type, fmt.Sprintf("%d rows per matrix, not a multiple of %d", n, target.Interleave())
	}
	if err := formats.Interleave(target, ne0, nil, nil); err != nil {
		return t.Type, err.Error()
	}
	return target, fmt.Sprintf("%s -> %s", t.Type, target)
}

func exampleName(m *gguf.Model) string {
	for _, t := range m.Tensors {
		if strings.HasPrefix(t.Name, "blk.") {
			return t.Name
		}
	}
	if len(m.Tensors) > 0 {
		return m.Tensors[0].Name
	}
	return ""
}

func (p *Plan) nothingToDo(interleaved int) error {
	scope := ""
	if len(p.Options.Patterns) > 0 {
		scope = " among the tensors the patterns match"
	}
	if p.Options.Undo {
		return fmt.Errorf("%w: no row-interleaved tensor to convert back%s", ErrNothingToDo, scope)
	}
	if p.InputRepacked || interleaved > 0 {
		return &wrapped{
			msg:  fmt.Sprintf("%v (general.file_type %s, %d row-interleaved tensors): nothing left to repack%s; --undo converts it back", ErrAlreadyRepacked, p.FileType.From, interleaved, scope),
			errs: []error{ErrAlreadyRepacked, ErrNothingToDo},
		}
	}
	return fmt.Errorf("%w: no tensor%s has a repackable type with a fitting row count (repackable: %s)", ErrNothingToDo, scope, RepackableTypeNames())
}

// fileTypeChange works out general.file_type: the reference's
// repacked_ftype of the model's file type when repacking, UndoFileType when
// undoing.
func fileTypeChange(m *gguf.Model, undo bool) (FileTypeChange, error) {
	var c FileTypeChange
	n, present, err := m.Metadata.LookupUint(keyFileType)
	if err == nil && n > 0xffffffff {
		err = fmt.Errorf("%s is %d, out of range", keyFileType, n)
	}
	if err != nil {
		return c, fmt.Errorf("repack: %s: %w", m.Path, err)
	}
	if present {
		c.From, c.Present = recipes.FileType(n), true
	}
	if !c.Present {
		types := make([]formats.Type, len(m.Tensors))
		for i, t := range m.Tensors {
			types[i] = t.Type
		}
		c.From = GuessFileType(types)
	}
	if undo {
		c.To, c.Write = UndoFileType(c.From), c.Present
		if !c.Present {
			c.To = c.From
		}
		return c, nil
	}
	c.To, c.Write = RepackedFileType(c.From), true
	return c, nil
}

// Metadata keys the repack writes.
const (
	keyFileType            = "general.file_type"
	keyQuantizationVersion = "general.quantization_version"
	quantizationVersion    = 2 // GGML_QNT_VERSION
)

// Describe writes the plan for people: the file type change, then one line
// per tensor saying what happens to it and why.
func (p *Plan) Describe(w io.Writer) {
	verb := "repack"
	if p.Options.Undo {
		verb = "undo"
	}
	var in, out int64
	for _, t := range p.Tensors {
		in += t.InBytes
		out += t.OutBytes
	}
	ft := "unchanged"
	if p.FileType.Write {
		ft = fmt.Sprintf("%s -> %s", p.FileType.From, p.FileType.To)
	}
	fmt.Fprintf(w, "%s: %d of %d tensors converted; general.file_type %s; tensor data %d -> %d bytes\n",
		verb, p.Converted, len(p.Tensors), ft, in, out)
	width := 0
	for _, t := range p.Tensors {
		width = max(width, len(t.Name))
	}
	for i, t := range p.Tensors {
		action := "keep    "
		if t.Converted() {
			action = "convert "
		}
		fmt.Fprintf(w, "[%4d/%4d] %-*s %-14s %-9s %s%s\n", i+1, len(p.Tensors), width, t.Name, shapeString(t.Shape), t.From, action, t.Reason)
	}
	for _, s := range p.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

func shapeString(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, "x")
}

// wrapped is an error that matches several sentinels (errors.Is) under one message.
type wrapped struct {
	msg  string
	errs []error
}

func (e *wrapped) Error() string   { return e.msg }
func (e *wrapped) Unwrap() []error { return e.errs }
