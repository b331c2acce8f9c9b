package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
	"github.com/gquant/gquant/splitter"
)

// KV is one --override-kv KEY=TYPE:VALUE, already parsed: a metadata key
// and value as gguf has them.
type KV = gguf.KV

// Config is what a quantize run asks for.
type Config struct {
	// Selection holds the options that decide each tensor's type;
	// HasImatrix is filled in by Build.
	Selection recipes.Options
	// Imatrix is the importance matrix (nil for none), already filtered by
	// --include-weights / --exclude-weights.
	Imatrix *imatrix.Matrix
	// ImatrixPath is recorded as quantize.imatrix.file, as given.
	ImatrixPath string
	// HideImatrix records "top_secret" and zeros instead of the imatrix details.
	HideImatrix bool
	// Overrides are --override-kv values, applied in order.
	Overrides []KV
	// Output is the output file, or with KeepSplit the prefix of the shards.
	Output string
	// KeepSplit writes one output shard per input shard.
	KeepSplit bool
	// Split, when set, writes the output straight into shards planned as
	// llama-gguf-split would plan them (Output is then the shards' prefix).
	Split *splitter.Limits
	// AllowRequantize permits quantized input tensors to be requantized.
	AllowRequantize bool
	// PartialRequant skips output files that already exist (--partial-requant):
	// with KeepSplit per shard, otherwise the whole run.
	PartialRequant bool
	// SizesOnly: the plan is wanted for its sizes and layout alone, with a
	// stand-in importance matrix that lacks the data (gquant fit checks the
	// real matrix's coverage itself), so tensors without importance data
	// are not refused for it.
	SizesOnly bool
	// Resume continues an interrupted run (--resume): an output it completed
	// before it stopped (a shard renamed into place, with the sidecar that
	// says it is this plan's) is kept; any other existing output is left
	// to the rule for existing outputs.
	Resume bool
	// ExtraOutput, when set, adds output_extra.weight: the output tensor (or
	// the token embeddings of a tied model) once more in this type
	// (--extra-output-tensor), if that is smaller than the original.
	ExtraOutput *formats.Type
	// Kernel holds the kernel switches (--symmetric-q40, --slow-iq2ks) every
	// quantized tensor gets (Tensor.Kernel).
	Kernel quantize.Options
	// OnlyShards, when set, writes only the selected outputs (shards) and
	// leaves the others to other runs (Output.Elsewhere; see shards.go).
	OnlyShards *ShardSelection
}

// TensorPlan is the plan for one tensor, for reports.
type TensorPlan struct {
	recipes.Choice
	Output      int    // output file index
	Bytes       int64  // bytes of data written
	ImatrixFrom string // entry the importance data came from ("" for none)
	Note        string // how the importance data was adapted, if it was
	// ImatrixIgnored is Importance.Ignored: why the entry of this tensor
	// (token_embd.weight) was not used.
	ImatrixIgnored string
}

// Plan is a whole quantize run, ready for Run.
type Plan struct {
	Selection *recipes.Plan
	Tensors   []TensorPlan
	Outputs   []Output
	Sizes     []int64 // exact file size of each output
	Warnings  []string
	// Notes say what the plan does that needs no attention (an output
	// kept as it is); unlike warnings they fail no --strict plan.
	Notes []string

	// Extra is what came of --extra-output-tensor (nil without it), for
	// the log.
	Extra *ExtraOutput

	extra *TensorPlan // --extra-output-tensor, placed by layoutOutputs
}

// ExtraOutput is what --extra-output-tensor asked for and what came of it.
type ExtraOutput struct {
	Source string       // the tensor it duplicates; "" when the model has none to duplicate
	Type   formats.Type // the type asked for
	// Bytes is the copy's size in Type, SourceBytes the source tensor's:
	// the copy is added only if it is smaller (Added).
	Bytes, SourceBytes int64
	Added              bool
}

// Total returns the bytes of all outputs.
func (p *Plan) Total() int64 {
	var n int64
	for _, s := range p.Sizes {
		n += s
	}
	return n
}

// ErrOverride is returned for an --override-kv of a key the output's layout
// decides.
var ErrOverride = errors.New("pipeline: key cannot be overridden")

// CheckOverrides refuses overrides of the split keys: the writer sets them
// from the output's shards, and a file whose split.count says 5 when it is
// one file is a file no reader accepts.
func CheckOverrides(kvs []KV) error {
	for _, kv := range kvs {
		switch kv.Key {
		case gguf.KeySplitNo, gguf.KeySplitCount, gguf.KeySplitTensorsCount:
			return fmt.Errorf("%w: %s (the split keys describe the output's shards and are set when they are written)", ErrOverride, kv.Key)
		}
	}
	return nil
}

// ErrRequantize is returned when a quantized input tensor would be
// quantized again without Config.AllowRequantize.
var ErrRequantize = errors.New("pipeline: tensor is quantized already")

// Build decides every tensor's type, attaches importance data and lays out
// the output files with their metadata and exact sizes. It reads headers
// only.
func Build(in *gguf.Model, cfg Config) (*Plan, error) {
	if err := CheckOverrides(cfg.Overrides); err != nil {
		return nil, err
	}
	sel := cfg.Selection
	sel.HasImatrix = cfg.Imatrix != nil && len(cfg.Imatrix.Entries) > 0
	if !sel.HasImatrix && !sel.IgnoreImatrixRules && sel.FileType.RequiresImatrix() {
		if t, err := sel.FileType.DefaultType(); err == nil && kernelNeedsImatrix(t) {
			// --ignore-imatrix-rules would not help: the kernel of the
			// file type's main type needs the data itself.
			return nil, fmt.Errorf("file type %s: %w (llama-quantize refuses it without one, and the %s kernel does not run without one)",
				sel.FileType, quantize.ErrKernelNeedsImatrix, t)
		}
		return nil, fmt.Errorf("file type %s: %w (llama-quantize refuses it without one)", sel.FileType, quantize.ErrNeedsImatrix)
	}
	params, err := recipes.ModelParams(in.Metadata)
	if err != nil {
		return nil, err
	}
	if src, _, _, _, err := extraSource(in, cfg); err != nil {
		return nil, err
	} else if src >= 0 {
		sel.ExtraOutputSource = in.Tensors[src].Name
	}
	rp, err := recipes.Select(sel, params, in.Infos())
	if err != nil {
		return nil, err
	}
	plan := &Plan{Selection: rp, Warnings: append([]string(nil), rp.Warnings...)}

	// Where each tensor's importance data comes from: Build reads each
	// entry once, a matrix at a time, to check it, and keeps none of it.
	imat := make([]*importanceSource, len(in.Tensors))
	plan.Tensors = make([]TensorPlan, len(rp.Choices))
	for i, c := range rp.Choices {
		tp := TensorPlan{Choice: c}
		src := in.Tensors[i]
		if c.Quantize {
			// A type the loader refuses is refused as such (checkLoaded),
			// as the reference's loader stops before it would requantize.
			if src.Type.IsQuantized() && !cfg.AllowRequantize && c.Type != src.Type && !src.Type.NotLoaded() {
				return nil, fmt.Errorf("tensor %s: %w (it is %s)", c.Name, ErrRequantize, src.Type)
			}
			// The run's check (checkTensor), made before any work: plan and
			// --dry-run say no where the run says no.
			if src.Type.Interleave() > 1 && c.Type != src.Type {
				return nil, fmt.Errorf("tensor %s: requantizing from the row-interleaved %s is not supported (llama-quantize dequantizes it); run 'gquant repack --undo' on %s first", c.Name, src.Type, in.Shards[src.Shard].Path)
			}
			// A type the reference writes but gquant has no kernel for
			// (q8_k_r16, by --custom-q) fails the plan, not the run.
			if c.Type != formats.F32 && !quantize.Supported(c.Type) {
				return nil, fmt.Errorf("tensor %s: %w %s", c.Name, quantize.ErrUnsupported, c.Type)
			}
			if sel.HasImatrix {
				is, imp, err := findImportance(cfg.Imatrix, src.TensorInfo, c.Type)
				if err != nil {
					return nil, err
				}
				if info, _ := c.Type.Info(); is != nil && info.ImatrixFails {
					// llama-quantize aborts in the kernel, after writing
					// the tensors before this one.
					return nil, fmt.Errorf("tensor %s: %w: %s, and the importance matrix has entry %s for it",
						c.Name, quantize.ErrImatrixRefused, c.Type, imp.From)
				}
				imat[i], tp.ImatrixFrom, tp.Note, tp.ImatrixIgnored = is, imp.From, imp.Note, imp.Ignored
				if imp.Note != "" {
					plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s: %s", c.Name, imp.Note))
				}
			}
		}
		size, err := c.Type.TensorSize(c.Shape)
		if err != nil {
			return nil, fmt.Errorf("tensor %s as %s: %w", c.Name, c.Type, err)
		}
		tp.Bytes = size
		plan.Tensors[i] = tp
	}
	extra, err := extraOutput(in, cfg, plan, imat)
	if err != nil {
		return nil, err
	}
	if sel.HasImatrix {
		plan.Warnings = append(plan.Warnings, unusedImatrix(cfg, rp.Choices, imat)...)
	}
	if !cfg.SizesOnly {
		if err := checkImatrix(rp.Choices, imat); err != nil {
			return nil, err
		}
	}

	md := outputMetadata(in.Metadata, cfg, rp.FileType)
	if err := layoutOutputs(plan, in, cfg, md, imat, extra); err != nil {
		return nil, err
	}
	if cfg.OnlyShards != nil {
		if err := selectShards(plan, in, *cfg.OnlyShards); err != nil {
			return nil, err
		}
	}
	if cfg.PartialRequant || cfg.Resume {
		markExisting(plan, in, cfg.PartialRequant)
	}
	if err := checkLoaded(plan, in); err != nil {
		return nil, err
	}
	if other := otherShardSets(plan); len(other) > 0 {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("%d file(s) with the same prefix belong to a shard set of another size and are not part of this output: %s",
			len(other), strings.Join(other, ", ")))
	}
	return plan, nil
}

// unusedImatrix warns, as llama-quantize's "did not find weights for",
// about each quantized tensor the importance matrix has no data for, and
// once more when no entry matches any tensor of the model (an imatrix of
// another model, or entries filtered away).
func unusedImatrix(cfg Config, choices []recipes.Choice, imat []*importanceSource) []string {
	var out []string
	quantized, with := 0, 0
	for i, c := range choices {
		if !c.Quantize || !c.Type.IsQuantized() {
			continue
		}
		quantized++
		if imat[i] != nil {
			with++
			continue
		}
		out = append(out, fmt.Sprintf("%s: no importance data in %s: quantized as %s without it", c.Name, cfg.ImatrixPath, c.Type))
	}
	if quantized > 0 && with == 0 {
		out = append(out, fmt.Sprintf("the importance matrix %s has %d entries and none matches a tensor quantized here: it is not used (an importance matrix of another model?)",
			cfg.ImatrixPath, cfg.Imatrix.Len()))
	}
	return out
}

// extraSource finds the tensor --extra-output-tensor duplicates, its type
// and size as the copy, or -1 with the warning that says why there is no
// copy.
func extraSource(in *gguf.Model, cfg Config) (src int, typ formats.Type, size int64, warning string, err error) {
	if cfg.ExtraOutput == nil {
		return -1, 0, 0, "", nil
	}
	src = in.TensorIndex("output.weight")
	if src < 0 {
		src = in.TensorIndex("token_embd.weight")
	}
	if src < 0 {
		return -1, 0, 0, "--extra-output-tensor: the model has neither output.weight nor token_embd.weight", nil
	}
	t := in.Tensors[src]
	typ = *cfg.ExtraOutput
	if _, rows, _ := gguf.Dims(t.Shape); rows%int64(typ.Interleave()) != 0 {
		typ = typ.Base()
	}
	if size, err = typ.TensorSize(t.Shape); err != nil {
		return -1, 0, 0, "", fmt.Errorf("--extra-output-tensor %s for %s: %w", typ, t.Name, err)
	}
	if size >= t.Size {
		return -1, 0, 0, fmt.Sprintf("--extra-output-tensor: %s as %s (%d bytes) is not smaller than the original (%d bytes): not added", t.Name, typ, size, t.Size), nil
	}
	return src, typ, size, "", nil
}

// extraOutcome describes --extra-output-tensor as llama-quantize reports
// it: the tensor it duplicates, the type asked for and the sizes it
// compares, the copy's in the type asked for.
func extraOutcome(in *gguf.Model, typ formats.Type, added bool) *ExtraOutput {
	e := &ExtraOutput{Type: typ, Added: added}
	src := in.TensorIndex("output.weight")
	if src < 0 {
		src = in.TensorIndex("token_embd.weight")
	}
	if src < 0 {
		return e
	}
	t := in.Tensors[src]
	e.Source, e.SourceBytes = t.Name, t.Size
	size, err := typ.TensorSize(t.Shape)
	if err != nil {
		size, _ = typ.Base().TensorSize(t.Shape)
	}
	e.Bytes = size
	return e
}

// extraOutput plans --extra-output-tensor: the index of the tensor it
// duplicates and its plan, or -1.
func extraOutput(in *gguf.Model, cfg Config, plan *Plan, imat []*importanceSource) (extra int, err error) {
	src, typ, size, warning, err := extraSource(in, cfg)
	if warning != "" {
		plan.Warnings = append(plan.Warnings, warning)
	}
	if err != nil {
		return -1, err
	}
	if cfg.ExtraOutput != nil {
		plan.Extra = extraOutcome(in, *cfg.ExtraOutput, src >= 0)
	}
	if src < 0 {
		return -1, nil
	}
	t := in.Tensors[src]
	if imat[src] == nil && cfg.Imatrix != nil && len(cfg.Imatrix.Entries) > 0 {
		is, _, err := findImportance(cfg.Imatrix, t.TensorInfo, typ)
		if err != nil {
			return -1, err
		}
		imat[src] = is
	}
	plan.extra = &TensorPlan{Choice: recipes.Choice{Index: src, Name: "output_extra.weight", Shape: t.Shape, Source: t.Type, Type: typ,
		Quantize: true, Reason: recipes.ReasonOverride, Option: "--extra-output-tensor",
		Why: "--extra-output-tensor: a copy of " + t.Name}, Bytes: size}
	return src, nil
}

// Headers returns the tensor headers of the file o is: names, shapes and
// written types, in order (gguf.Create and gguf.FileSize take them).
func (o Output) Headers() []gguf.TensorInfo {
	infos := make([]gguf.TensorInfo, len(o.Tensors))
	for j, t := range o.Tensors {
		infos[j] = gguf.TensorInfo{Name: t.Name, Shape: t.Shape, Type: t.Type}
	}
	return infos
}

// splitOutputs re-lays a single-file plan into shards planned by the
// splitter, so quantizing writes the shards directly.
func splitOutputs(plan *Plan, md gguf.Metadata, limits splitter.Limits, prefix string) error {
	all := plan.Outputs[0].Tensors
	infos := plan.Outputs[0].Headers()
	sp, err := splitter.PlanShards(md, infos, limits)
	if err != nil {
		return err
	}
	plan.Warnings = append(plan.Warnings, sp.Warnings...)
	paths := sp.Paths(prefix)
	plan.Outputs = make([]Output, len(sp.Shards))
	plan.Sizes = make([]int64, len(sp.Shards))
	for s, sh := range sp.Shards {
		o := Output{Path: paths[s], Metadata: sh.Metadata}
		for _, j := range sh.Source {
			o.Tensors = append(o.Tensors, all[j])
			plan.Tensors[j].Output = s
		}
		plan.Outputs[s] = o
		plan.Sizes[s] = sh.FileSize
	}
	return nil
}

// checkImatrix refuses, as llama-quantize does, the first tensor that the
// type choice marks as needing importance data (recipes.Choice.NeedsImatrix,
// never set with --ignore-imatrix-rules) and that has none (imat, by input
// tensor); and, before any work, the first without it whose type's kernel
// cannot run without it, where llama-quantize asserts when it gets there.
func checkImatrix(choices []recipes.Choice, imat []*importanceSource) error {
	for _, c := range choices {
		if !c.Quantize || imat[c.Index] != nil {
			continue
		}
		// The kernel's refusal first where both hold: --ignore-imatrix-rules
		// lifts only the rules'.
		if kernelNeedsImatrix(c.Type) {
			return fmt.Errorf("tensor %s as %s: %w: the %s kernel does not run without one", c.Name, c.Type, quantize.ErrKernelNeedsImatrix, c.Type)
		}
		if c.NeedsImatrix {
			return fmt.Errorf("tensor %s as %s: %w (llama-quantize refuses very low-bit types without importance data for the tensor)", c.Name, c.Type, quantize.ErrNeedsImatrix)
		}
	}
	return nil
}

// kernelNeedsImatrix reports whether t's kernel does not run without
// importance data.
func kernelNeedsImatrix(t formats.Type) bool {
	info, ok := t.Info()
	return ok && info.NeedsImatrix
}

// markExisting applies --partial-requant: an output that exists and
// matches the plan exactly, by its header and its sidecar if it has one
// (see kept.go), is kept (Skip); one that exists but does not is written
// again (Replace), with a warning saying why.
//
// Without replace (Config.Resume alone) only an output whose sidecar says it
// is this plan's is kept, and one that does not match is left alone.
func markExisting(plan *Plan, in *gguf.Model, replace bool) {
	for i := range plan.Outputs {
		o := &plan.Outputs[i]
		if o.Elsewhere {
			continue
		}
		if _, err := os.Lstat(o.Path); err != nil {
			continue
		}
		err := CheckExisting(o.Path, *o, plan.Sizes[i])
		if err == nil {
			o.kept, err = checkSidecarPlan(in, *o, plan.Sizes[i])
		}
		if !replace {
			if err == nil && o.kept != nil {
				o.Skip, o.resumed = true, true
				plan.Notes = append(plan.Notes, keptNote(o.Path)+"kept (completed by the interrupted run; --resume)")
			}
			continue
		}
		if err != nil {
			o.Replace = true
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s exists but is not this plan's output (%v): written again (--partial-requant)", o.Path, err))
			continue
		}
		o.Skip = true
		how := ""
		if o.kept == nil {
			how = "; it has no sidecar, so only its header was checked"
		}
		plan.Notes = append(plan.Notes, keptNote(o.Path)+"kept (--partial-requant"+how+")")
	}
}

// checkLoaded refuses, before any work, an input tensor the run would read
// whose type llama-quantize's loader refuses whatever its bytes
// (formats.ErrNotLoaded); the tensors of outputs left alone are not read,
// as the reference does not load those of a split it skips.
func checkLoaded(plan *Plan, in *gguf.Model) error {
	for _, o := range plan.Outputs {
		if o.Skip {
			continue
		}
		for _, t := range o.Tensors {
			if src := in.Tensors[t.Source]; src.Type.NotLoaded() {
				return fmt.Errorf("tensor %s in %s: %w: it is %s", src.Name, in.Shards[src.Shard].Path, formats.ErrNotLoaded, src.Type)
			}
		}
	}
	return nil
}

// keptNote starts the note of an output the run keeps: VerifyKept takes it
// back where the output's bytes turn out not to be the plan's.
func keptNote(path string) string { return path + " exists and matches the plan: " }

// CheckExisting tells whether the file at path is exactly the output o of
// size bytes a run would write, as far as its header shows: the same file
// size and the plan's header byte for byte (tensors in the same order with
// the same types, shapes, offsets and sizes, every metadata key and value).
// It returns nil for a match, else an error saying the first difference. It
// reads the header only, so it cannot see data that was changed in place.
func CheckExisting(path string, o Output, size int64) error {
	f, fileSize, err := gguf.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := gguf.Read(f, fileSize)
	if err != nil {
		if fileSize != size {
			return fmt.Errorf("%d bytes, the plan has %d", fileSize, size)
		}
		return err
	}
	// The causes first, their consequences after: another type, another
	// key or a value of another length (an importance matrix path spelt
	// otherwise) moves the tensors' offsets and the file size, and a
	// message about sizes would hide what differs.
	infos := o.Headers()
	dataOffset, want, err := gguf.Layout(o.Metadata, infos)
	if err != nil {
		return err
	}
	if len(got.Tensors) != len(want) {
		return fmt.Errorf("%d tensors, the plan has %d", len(got.Tensors), len(want))
	}
	for i, w := range want {
		g := got.Tensors[i]
		switch {
		case g.Name != w.Name:
			return fmt.Errorf("tensor %d is %s, the plan has %s", i, g.Name, w.Name)
		case g.Type != w.Type:
			return fmt.Errorf("tensor %s is %s, the plan has %s", g.Name, g.Type, w.Type)
		case !slices.Equal(g.Shape, w.Shape):
			return fmt.Errorf("tensor %s has shape %v, the plan has %v", g.Name, g.Shape, w.Shape)
		}
	}
	for _, key := range []string{gguf.KeySplitNo, gguf.KeySplitCount, gguf.KeySplitTensorsCount, "general.file_type"} {
		a, inPlan := o.Metadata.Lookup(key)
		b, inFile := got.Metadata.Lookup(key)
		if inPlan != inFile || inPlan && !a.Equal(b) {
			return fmt.Errorf("%s is %s, the plan has %s", key, describeKey(b, inFile), describeKey(a, inPlan))
		}
	}
	// The rest of the metadata (an --override-kv, the input's name, the
	// imatrix keys) must be the plan's too: a kept file is the file this
	// run would write.
	if err := metadataDiff(got.Metadata, o.Metadata); err != nil {
		return err
	}
	if got.DataOffset != dataOffset {
		return fmt.Errorf("data starts at byte %d, the plan has %d", got.DataOffset, dataOffset)
	}
	for i, w := range want {
		if g := got.Tensors[i]; g.Offset != w.Offset || g.Size != w.Size {
			return fmt.Errorf("tensor %s at offset %d (%d bytes), the plan has %d (%d bytes)", g.Name, g.Offset, g.Size, w.Offset, w.Size)
		}
	}
	if fileSize != size {
		return fmt.Errorf("%d bytes, the plan has %d", fileSize, size)
	}
	header, err := gguf.EncodeHeader(o.Metadata, infos)
	if err != nil {
		return err
	}
	have := make([]byte, len(header))
	if _, err := f.ReadAt(have, 0); err != nil {
		return fmt.Errorf("reading its header: %w", err)
	}
	if !bytes.Equal(have, header) {
		return errors.New("the encoding of its header differs from the plan's")
	}
	return nil
}

// metadataDiff names the first key where a file's metadata got differs
// from the plan's want, and is nil where they are the same keys, in the
// same order, with the same values.
func metadataDiff(got, want gguf.Metadata) error {
	for i, kv := range want {
		if i >= len(got) {
			return fmt.Errorf("the file lacks %s and %d more key(s)", kv.Key, len(want)-i-1)
		}
		if got[i].Key != kv.Key {
			return fmt.Errorf("key %d is %s, the plan has %s", i+1, got[i].Key, kv.Key)
		}
		if !got[i].Value.Equal(kv.Value) {
			return fmt.Errorf("%s is %s, the plan has %s", kv.Key, got[i].Value, kv.Value)
		}
	}
	if len(got) > len(want) {
		return fmt.Errorf("the file has %s and %d more key(s) the plan has not", got[len(want)].Key, len(got)-len(want)-1)
	}
	return nil
}

func describeKey(v gguf.Value, present bool) string {
	if !present {
		return "absent"
	}
	return v.String()
}

// otherShardSets lists the files beside the planned shards that are shards
// of the same prefix with another shard count: left from an earlier run
// with other limits, they would mix with the new set.
func otherShardSets(plan *Plan) []string {
	if len(plan.Outputs) == 0 {
		return nil
	}
	prefix, _, n, ok := gguf.ParseShardPath(plan.Outputs[0].Path)
	if !ok {
		return nil
	}
	return shardsOfOtherCounts(prefix, n)
}

// Importance is the importance data a quantize run gives one tensor, found
// and adapted as llama-quantize does.
type Importance struct {
	Data   []float32 // ne0 values per matrix; nil for none
	From   string    // the entry it came from (another name for the reference's fallbacks); "" for none
	Note   string    // how the data was adapted, if it was
	Counts []float64 // each matrix's call count where the file has one per matrix (GGUF), else nil
	// Ignored is set for token_embd.weight only, when its entry is not the
	// tensor's size: the reference then quantizes without data and says
	// so (this text, "imatrix size N is different from tensor size M").
	Ignored string
}

// TensorImportance returns the importance data of tensor t quantized as
// typ: the entry m.Find gives (with the reference's name fallbacks), the
// attn_kv_b vector repeated for each head of an MLA attn_v_b, and uniform
// importance for the all-zero slices of the types that fail on them
// (quantize.FailsOnZeroImportance). The entry itself is never modified. An
// entry of the wrong size is an error, except for token_embd.weight, as in
// the reference. m may be an index (imatrix.OpenIndex).
func TensorImportance(m *imatrix.Matrix, t gguf.TensorInfo, typ formats.Type) (Importance, error) {
	src, imp, err := findImportance(m, t, typ)
	if err != nil || src == nil {
		return imp, err
	}
	if imp.Data, err = (Tensor{Name: t.Name, importance: src}).ImportanceData(); err != nil {
		return Importance{}, err
	}
	return imp, nil
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// outputMetadata is the input's metadata as llama-quantize writes it: keys
// in order, general.quantization_version set, split keys removed, overrides
// and imatrix details applied, then general.file_type.
func outputMetadata(in gguf.Metadata, cfg Config, ft recipes.FileType) gguf.Metadata {
	md := in.Clone()
	md.Set("general.quantization_version", gguf.Uint32Value(2))
	md.Delete(gguf.KeySplitNo)
	md.Delete(gguf.KeySplitCount)
	md.Delete(gguf.KeySplitTensorsCount)
	for _, kv := range ConfigKeys(cfg) {
		md.Set(kv.Key, kv.Value)
	}
	md.Set("general.file_type", gguf.Uint32Value(uint32(ft)))
	return md
}

// ConfigKeys lists the keys a run sets in its output's metadata from its
// options, in the order llama-quantize sets them (its kv overrides): the
// --override-kv keys, then the importance matrix's file, dataset, entry
// and chunk counts (--hide-imatrix hides their values). A --repack run
// sets them too.
func ConfigKeys(cfg Config) []KV {
	kvs := append([]KV(nil), cfg.Overrides...)
	if m := cfg.Imatrix; m != nil && len(m.Entries) > 0 {
		// A GGUF importance matrix may list several datasets (a merge);
		// mainline llama-quantize, the reader of that format, records the
		// first. A .dat file has one.
		var dataset string
		if len(m.Datasets) > 0 {
			dataset = truncate127(m.Datasets[0])
		}
		file := truncate127(cfg.ImatrixPath)
		entries, chunks := int32(m.Len()), int32(m.Chunks)
		if cfg.HideImatrix {
			file, dataset, entries, chunks = "top_secret", "top_secret", 0, 0
		}
		kvs = append(kvs, KV{Key: "quantize.imatrix.file", Value: gguf.StringValue(file)})
		if len(m.Datasets) > 0 {
			kvs = append(kvs, KV{Key: "quantize.imatrix.dataset", Value: gguf.StringValue(dataset)})
		}
		kvs = append(kvs, KV{Key: "quantize.imatrix.entries_count", Value: gguf.Int32Value(entries)})
		if m.Chunks > 0 {
			kvs = append(kvs, KV{Key: "quantize.imatrix.chunks_count", Value: gguf.Int32Value(chunks)})
		}
	}
	return kvs
}

// truncate127 keeps what the reference's 128-byte override buffer keeps.
func truncate127(s string) string {
	if len(s) > 127 {
		return s[:127]
	}
	return s
}

// layoutOutputs assigns tensors to output files: one file, or with
// KeepSplit one per input shard (the first with the model's metadata, the
// others with the split keys only, as llama-quantize writes them).
func layoutOutputs(plan *Plan, in *gguf.Model, cfg Config, md gguf.Metadata, imat []*importanceSource, extra int) error {
	nSplit := 1
	if cfg.KeepSplit {
		for _, t := range in.Tensors {
			nSplit = max(nSplit, t.Shard+1)
		}
	}
	plan.Outputs = make([]Output, nSplit)
	for s := range plan.Outputs {
		o := &plan.Outputs[s]
		o.Path = cfg.Output
		if cfg.KeepSplit {
			o.Path = gguf.ShardPath(strings.TrimSuffix(cfg.Output, ".gguf"), s, nSplit)
		}
		if s == 0 {
			o.Metadata = md
		}
		if nSplit > 1 {
			o.Metadata = o.Metadata.Clone()
			o.Metadata.Set(gguf.KeySplitNo, gguf.Uint16Value(uint16(s)))
			o.Metadata.Set(gguf.KeySplitCount, gguf.Uint16Value(uint16(nSplit)))
			o.Metadata.Set(gguf.KeySplitTensorsCount, gguf.Int32Value(int32(len(in.Tensors))))
		}
	}
	var tensors []TensorPlan
	for i, tp := range plan.Tensors {
		s := 0
		if cfg.KeepSplit {
			s = in.Tensors[i].Shard
		}
		tp.Output = s
		tensors = append(tensors, tp)
		plan.Outputs[s].Tensors = append(plan.Outputs[s].Tensors, Tensor{
			Name: tp.Name, Shape: tp.Shape, Source: i, Type: tp.Type,
			Convert:    tp.Quantize,
			importance: imat[i],
			Kernel:     cfg.Kernel,
		})
		if i == extra && plan.extra != nil {
			e := *plan.extra
			e.Output = s
			tensors = append(tensors, e)
			plan.Outputs[s].Tensors = append(plan.Outputs[s].Tensors, Tensor{
				Name: e.Name, Shape: e.Shape, Source: i, Type: e.Type, Convert: true, importance: imat[i], Kernel: cfg.Kernel})
		}
	}
	plan.Tensors = tensors
	if cfg.Split != nil {
		return splitOutputs(plan, md, *cfg.Split, cfg.Output)
	}
	plan.Sizes = make([]int64, nSplit)
	for s, o := range plan.Outputs {
		infos := o.Headers()
		size, err := gguf.FileSize(o.Metadata, infos)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Path, err)
		}
		plan.Sizes[s] = size
	}
	return nil
}
