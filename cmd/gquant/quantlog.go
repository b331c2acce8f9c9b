package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// A quantize run logs what llama-quantize logs, in its formats and on its
// streams, so that scripts and greps written for it keep working: on
// stderr the "main: quantizing" line, one line per tensor ("[   5/  74]
// blk.0.attn_q_a.weight - [  256,   256,     1,     1], type =   bf16,
// converting to q4_K .. size =     0.12 MiB ->     0.04 MiB", with the
// custom-rule, fallback and missing-importance notes the reference prints
// inside it) and the closing size summary; on stdout the rule and
// importance-matrix lines before the run and the timing lines after it.
// Lines of our own (warnings, files written) go to stderr. On a terminal a
// progress bar with percentage and time left stays below the lines.

// refFunc is the function name the reference's library lines carry.
const refFunc = "llama_model_quantize_internal"

// runLog prints one run.
type runLog struct {
	stderr     io.Writer // escaping (cli.Set.Run)
	refOut     io.Writer // the reference's printf lines: stdout, or stderr under --json
	in         *gguf.Model
	plan       *pipeline.Plan
	hasImatrix bool

	mu                sync.Mutex // Progress and Notes come from different goroutines
	bar               *progressbar.ProgressBar
	total, done, last int64 // input bytes: all, of finished tensors, shown

	fallbacks map[int]*pipeline.Fallback // by plan tensor index
	warnings  []cli.Warning              // of the run (fallback rows)

	// --partial-requant (skipKept): the outputs it keeps are skipped as
	// the reference skips them.
	partial, keepSplit bool
	number             []int // each plan tensor's number in its line, when not i+1
	announced          int   // outputs before this one had their skip line
	extraPrinted       bool  // the --extra-output-tensor lines are out
	clustered          bool  // iq4ktClusterLines are out
}

// iq4ktClusterLines are what the reference prints on stdout when it first
// quantizes iq4_kt in a process: building that type's codebook, one of its
// 625 clusters of grid points stays empty (cluster_points), always the same.
const iq4ktClusterLines = "cluster_points: Oops. Cluster 4 has no points:  0 1 0 0\n" +
	"cluster_points: 1 out of 625 clusters dir not have any points\n"

func newRunLog(stderr, refOut io.Writer, in *gguf.Model, plan *pipeline.Plan, hasImatrix bool) *runLog {
	l := &runLog{stderr: stderr, refOut: refOut, in: in, plan: plan, hasImatrix: hasImatrix, fallbacks: map[int]*pipeline.Fallback{}}
	for _, t := range plan.Tensors {
		if !plan.Outputs[t.Output].Skip {
			l.total += in.Tensors[t.Index].Size
		}
	}
	// The bar moves the cursor, so it writes to the terminal itself; the
	// tensor names it shows are escaped (cli.Escape).
	if raw := cli.Raw(stderr); isTerminal(raw) && l.total > 0 {
		l.bar = progressbar.NewOptions64(l.total,
			progressbar.OptionSetWriter(raw),
			progressbar.OptionShowBytes(true),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionFullWidth(),
		)
	}
	return l
}

// startLine prints the reference's opening line, before it opens IN.
func startLine(stderr io.Writer, input, output, fileType string, threads int) {
	fmt.Fprintf(stderr, "main: quantizing '%s' to '%s' as %s", input, output, fileType)
	if threads > 0 {
		fmt.Fprintf(stderr, " using %d threads", threads)
	}
	fmt.Fprintln(stderr)
}

// haveWeights is the reference's line once the importance data is in.
func (l *runLog) haveWeights(entries int) {
	fmt.Fprintf(l.stderr, "================================ Have weights data with %d entries\n", entries)
}

// skipKept makes the log of a --partial-requant run the reference's: an
// output kept (Skip) is announced where its tensors would come ("split
// file NAME exists, skipping"), and its tensors are not logged nor
// counted, so that the tensors after it are numbered from 1 on; without
// --keep-split the one output kept ends the run at once ("output file
// NAME exists, skipping", no sizes). Call it before the run's first line.
func (l *runLog) skipKept(keepSplit bool) {
	l.partial, l.keepSplit = true, keepSplit
}

// kept reports whether --partial-requant keeps output k.
func (l *runLog) kept(k int) bool {
	o := l.plan.Outputs[k]
	return l.partial && o.Skip && !o.Elsewhere
}

// wholeKept reports whether --partial-requant keeps the one output of a
// run without --keep-split: the reference then stops before any tensor.
func (l *runLog) wholeKept() bool {
	return l.partial && !l.keepSplit && len(l.plan.Outputs) == 1 && l.kept(0)
}

// opening prints what the reference prints before the first tensor,
// after the importance data: the --extra-output-tensor lines, unless the
// output is kept already as the plan stands.
func (l *runLog) opening() {
	if !l.wholeKept() {
		l.extraOutput()
	}
}

// begin prints, just before the tensors, the reference's line of an
// output --partial-requant keeps without --keep-split (its check comes
// before the extra output's, which the plan then does not print), or the
// --extra-output-tensor lines if the output was to be kept but is not
// after all (its bytes were not the plan's). The outputs kept are known
// from here on.
func (l *runLog) begin() {
	if l.partial {
		l.number = make([]int, len(l.plan.Tensors))
		n := 0
		for i, t := range l.plan.Tensors {
			if !l.kept(t.Output) {
				n++
			}
			l.number[i] = n
		}
	}
	switch {
	case l.wholeKept():
		fmt.Fprintf(l.stderr, "%s: output file %s exists, skipping\n", refFunc, l.plan.Outputs[0].Path)
	case !l.extraPrinted:
		l.extraOutput()
	}
}

// announceKept prints the reference's line for each output kept before
// output k, as the reference reaches it; l.mu is held.
func (l *runLog) announceKept(k int) {
	if !l.partial || l.wholeKept() {
		return
	}
	for ; l.announced < k && l.announced < len(l.plan.Outputs); l.announced++ {
		if l.kept(l.announced) {
			l.print(fmt.Sprintf("operator(): split file %s exists, skipping\n", l.plan.Outputs[l.announced].Path))
		}
	}
	l.announced = max(l.announced, k+1)
}

// extraOutput prints the reference's lines about --extra-output-tensor,
// printed before any tensor: the tensor it duplicates and, where the copy
// would not be smaller, that it is not added.
func (l *runLog) extraOutput() {
	l.extraPrinted = true
	e := l.plan.Extra
	switch {
	case e == nil:
	case e.Source == "":
		fmt.Fprintln(l.stderr, "Extra output tensor requested, but 'output.weight' or 'token_embd.weight' not found")
	default:
		fmt.Fprintf(l.stderr, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX Will duplicate %s as %s\n", e.Source, e.Type)
		if !e.Added {
			fmt.Fprintf(l.stderr, "No, duplicating it makes no sense as the new size (%d) is greater than the original size (%d)\n", e.Bytes, e.SourceBytes)
		}
	}
}

// note is pipeline.Options.Notes: the line goes above the bar.
func (l *runLog) note(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.print("note: " + cli.Escape(s) + "\n")
}

// print writes text (whole lines) above the bar; l.mu is held.
func (l *runLog) print(text string) {
	if l.bar != nil {
		l.bar.Clear()
	}
	io.WriteString(l.stderr, text)
}

// event is pipeline.Options.Progress.
func (l *runLog) event(ev pipeline.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.done + ev.Done
	if l.bar != nil {
		l.bar.Describe(fmt.Sprintf("[%d/%d] %s", ev.Index+1, ev.Count, cli.Escape(ev.Name)))
		l.bar.Add64(cur - l.last)
	}
	l.last = cur
	if !ev.Finished {
		return
	}
	l.done += ev.Bytes
	l.last = l.done
	i := ev.Index
	if i >= len(l.plan.Tensors) || l.plan.Tensors[i].Name != ev.Name {
		i = l.tensorIndex(ev.Name)
	}
	if i < 0 {
		return
	}
	l.announceKept(l.plan.Tensors[i].Output)
	if t := l.plan.Tensors[i]; t.Quantize && t.Type == formats.IQ4_KT && !l.clustered {
		fmt.Fprint(l.refOut, iq4ktClusterLines)
		l.clustered = true
	}
	if note := embeddingsNote(l.plan.Tensors[i].Fallbacks); note != "" {
		fmt.Fprint(l.refOut, note)
	}
	text := l.tensorText(i)
	if fb := ev.Fallback; fb != nil {
		// Once per tensor: the rows where the reference would have
		// stopped the whole run.
		w := cli.Warning{Kind: "reference-abort-rows", Tensor: ev.Name,
			Message: fmt.Sprintf("%s (llama-quantize stops on these rows)", fb)}
		l.fallbacks[i] = fb
		l.warnings = append(l.warnings, w)
		text += "warning: " + w.String() + "\n"
	}
	l.print(text)
}

func (l *runLog) tensorIndex(name string) int {
	for i, t := range l.plan.Tensors {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// finish removes the bar; after a complete run it prints the reference's
// size summary.
func (l *runLog) finish(ok bool) {
	if l.bar != nil {
		if ok {
			l.bar.Finish()
		}
		l.bar.Clear()
	}
	if !ok || l.wholeKept() {
		return
	}
	l.announceKept(len(l.plan.Outputs))
	var org, quant int64
	for _, t := range l.plan.Tensors {
		if l.plan.Outputs[t.Output].Skip {
			continue
		}
		if !isExtra(t, l.in) {
			org += l.in.Tensors[t.Index].Size
		}
		quant += t.Bytes
	}
	fmt.Fprintf(l.stderr, "%s: model size  = %8.2f MB\n", refFunc, mib(org))
	fmt.Fprintf(l.stderr, "%s: quant size  = %8.2f MB\n", refFunc, mib(quant))
	if n := l.plan.Selection.NFallback; n > 0 {
		// The reference's count of k-quantized tensors is never raised,
		// so it prints the fallbacks twice.
		fmt.Fprintf(l.stderr, "%s: WARNING: %d of %d tensor(s) required fallback quantization\n", refFunc, n, n)
	}
}

// isExtra reports the --extra-output-tensor copy of another tensor.
func isExtra(t pipeline.TensorPlan, in *gguf.Model) bool {
	return t.Name != in.Tensors[t.Index].Name
}

func mib(n int64) float64 { return float64(n) / 1024 / 1024 }

// tensorText is the reference's log of tensor i of the plan, as it writes
// it on stderr (one line, with its notes on lines of their own).
func (l *runLog) tensorText(i int) string {
	n := i + 1
	if l.number != nil {
		n = l.number[i]
	}
	return numberedTensorText(l.in, l.plan, i, n, l.hasImatrix)
}

// blockFallback reads recipes' note of a row-length fallback.
var blockFallback = regexp.MustCompile(`^rows of (\d+) are not a multiple of (\S+)'s block: fallback (\S+)$`)

// embeddingFallback reads recipes' note of token embeddings kept from a
// row-interleaved type.
var embeddingFallback = regexp.MustCompile(`^(per-layer )?token embeddings cannot use row-interleaved (\S+): (\S+) used$`)

// embeddingsNote is what the reference prints on stdout when it keeps the
// token embeddings from a row-interleaved type ("---> Changed q4_0_r8 to
// q4_0"), once per change: it checks in llama_tensor_get_type and again
// after --token-embedding-type, which sets the interleaved type again, so
// with that option it prints the note twice. "" if the tensor's fallbacks
// hold no such change.
func embeddingsNote(fallbacks []string) string {
	var b strings.Builder
	for _, f := range fallbacks {
		if m := embeddingFallback.FindStringSubmatch(f); m != nil {
			what := "Token embeddings"
			if m[1] != "" {
				what = "Per-layer Token embeddings"
			}
			fmt.Fprintf(&b, "\n============ %s cannot be quantized with row-interleaved quants\n---> Changed %s to %s\n", what, m[2], m[3])
		}
	}
	return b.String()
}

func tensorText(in *gguf.Model, plan *pipeline.Plan, i int, hasImatrix bool) string {
	return numberedTensorText(in, plan, i, i+1, hasImatrix)
}

// numberedTensorText is tensorText with the tensor's number in the line:
// the reference counts the tensors it logs.
func numberedTensorText(in *gguf.Model, plan *pipeline.Plan, i, n int, hasImatrix bool) string {
	t := plan.Tensors[i]
	src := in.Tensors[t.Index]
	var b strings.Builder
	// The reference names the extra output tensor by its source tensor
	// and counts it past the number of tensors ([  75/  74]).
	fmt.Fprintf(&b, "[%4d/%4d] %36s - [%s], type = %6s, ", n, len(in.Tensors), src.Name, refShape(src.Shape), src.Type)
	if !isExtra(t, in) {
		// The notes of llama_tensor_get_type, printed while it chooses,
		// also where the type it chose is replaced after it (an option)
		// or is the source type (the tensor is then copied).
		if r := t.RuleApplied; r != nil {
			fmt.Fprintf(&b, "Using custom type %s for tensor %s\n", r.Type, src.Name)
		}
		for _, f := range t.Fallbacks {
			if m := blockFallback.FindStringSubmatch(f); m != nil {
				ne1 := int64(1)
				if len(src.Shape) > 1 {
					ne1 = src.Shape[1]
				}
				fmt.Fprintf(&b, "\n\nchange_type_if_necessary : tensor cols %s x %d are not divisible by 256, required for %s - using fallback quantization %s\n", m[1], ne1, m[2], m[3])
			}
		}
	}
	if !t.Quantize {
		if e := plan.Extra; e != nil && e.Added && src.Name == e.Source && !isExtra(t, in) {
			// The tensor --extra-output-tensor duplicates goes through
			// the reference's quantizing branch even when its type stays.
			fmt.Fprintf(&b, "converting to %s .. size = %8.2f MiB -> %8.2f MiB\n", src.Type, mib(src.Size), mib(src.Size))
			return b.String()
		}
		fmt.Fprintf(&b, "size = %8.3f MB\n", mib(src.Size))
		return b.String()
	}
	if !isExtra(t, in) {
		switch {
		case hasImatrix && t.ImatrixIgnored != "":
			fmt.Fprintf(&b, "\n====== %s: %s for %s\n", refFunc, t.ImatrixIgnored, src.Name)
		case hasImatrix && t.ImatrixFrom == "":
			fmt.Fprintf(&b, "\n====== %s: did not find weights for %s\n", refFunc, src.Name)
		}
	}
	fmt.Fprintf(&b, "converting to %s .. size = %8.2f MiB -> %8.2f MiB\n", t.Type, mib(src.Size), mib(t.Bytes))
	return b.String()
}

// refShape is llama_format_tensor_shape: four dimensions, each at least
// five wide.
func refShape(shape []int64) string {
	var parts [4]string
	for d := range parts {
		n := int64(1)
		if d < len(shape) {
			n = shape[d]
		}
		parts[d] = fmt.Sprintf("%5d", n)
	}
	return strings.Join(parts[:], ", ")
}

// prelude prints, as the reference does on stdout before the run, each
// custom rule and the importance matrix it loaded: entries and chunks as
// read (loaded) and after --include-weights / --exclude-weights (have).
func prelude(w io.Writer, rules *recipes.RuleSet, path string, m *imatrix.Matrix, loaded int) {
	if rules != nil {
		for _, r := range rules.Rules {
			fmt.Fprintf(w, "Adding custom rule %s -> %s\n", r.Pattern, r.Type)
		}
	}
	if m == nil {
		return
	}
	if len(m.Datasets) > 0 {
		fmt.Fprintf(w, "load_imatrix: imatrix dataset='%s'\n", strings.Join(m.Datasets, ", "))
	}
	fmt.Fprintf(w, "load_imatrix: loaded %d importance matrix entries from %s computed on %d chunks\n", loaded, path, m.Chunks)
	if m.Len() > 0 {
		fmt.Fprintf(w, "prepare_imatrix: have %d importance matrix entries\n", m.Len())
	}
}

// timing prints the reference's closing lines (stdout).
func timing(w io.Writer, quantize, total time.Duration) {
	fmt.Fprintf(w, "\nmain: quantize time = %8.2f ms\n", ms(quantize))
	fmt.Fprintf(w, "main:    total time = %8.2f ms\n", ms(total))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// quantizeDoc is the JSON summary of a run (quantize --json): what was
// written, each tensor's type and sizes, the reference's size summary.
type quantizeDoc struct {
	Schema     string               `json:"schema"`
	Input      string               `json:"input"`
	FileType   string               `json:"file_type"`
	Imatrix    string               `json:"imatrix,omitempty"`
	Outputs    []quantizeFileJSON   `json:"outputs"`
	Tensors    []quantizeTensorJSON `json:"tensors"`
	ModelBytes int64                `json:"model_bytes"` // the reference's "model size": input tensor data
	QuantBytes int64                `json:"quant_bytes"` // its "quant size": output tensor data
	// Fallbacks is the reference's closing count: tensors given a
	// fallback type because their rows do not fit the type's blocks.
	Fallbacks int `json:"fallbacks"`
	// RowFallbacks counts the tensors with rows written with a substitute
	// encoding (their fallback_rows).
	RowFallbacks int           `json:"row_fallbacks"`
	Seconds      float64       `json:"seconds"`
	Warnings     []cli.Warning `json:"warnings"`
}

type quantizeFileJSON struct {
	Index   int    `json:"index"` // from 1
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Tensors int    `json:"tensors"`
	Kept    bool   `json:"kept"` // --partial-requant left it as it was
	// OtherPart: another run writes it (--only-shards).
	OtherPart bool `json:"other_part,omitempty"`
}

type quantizeTensorJSON struct {
	Index       int     `json:"index"` // from 1, as the log's [  i/  n]
	Name        string  `json:"name"`
	Shape       []int64 `json:"shape"`
	SourceType  string  `json:"source_type"`
	Type        string  `json:"type"`
	Converted   bool    `json:"converted"`
	SourceBytes int64   `json:"source_bytes"`
	Bytes       int64   `json:"bytes"`
	DecidedBy   string  `json:"decided_by"`
	Rule        int     `json:"rule,omitempty"` // the deciding custom rule, from 1
	Imatrix     string  `json:"imatrix,omitempty"`
	File        int     `json:"file"` // outputs index, from 1
	// Fallback lists the rows written with a substitute encoding (rows
	// the reference cannot quantize, or whose importance data made them
	// non-finite), FallbackReason says why.
	Fallback       []int64 `json:"fallback_rows,omitempty"`
	FallbackReason string  `json:"fallback_reason,omitempty"`
}

func newQuantizeDoc(in *gguf.Model, plan *pipeline.Plan, imatrixPath string, l *runLog, warnings []cli.Warning, elapsed time.Duration) quantizeDoc {
	doc := quantizeDoc{Schema: cli.Schema(1, "quantize"), Input: in.Path, FileType: plan.Selection.FileType.String(), Imatrix: imatrixPath,
		Outputs: []quantizeFileJSON{}, Tensors: []quantizeTensorJSON{}, Fallbacks: plan.Selection.NFallback,
		Seconds: elapsed.Seconds(), Warnings: cli.Warnings(warnings)}
	for i, o := range plan.Outputs {
		doc.Outputs = append(doc.Outputs, quantizeFileJSON{Index: i + 1, Path: o.Path, Bytes: plan.Sizes[i], Tensors: len(o.Tensors),
			Kept: o.Skip && !o.Elsewhere, OtherPart: o.Elsewhere})
	}
	for i, t := range plan.Tensors {
		src := in.Tensors[t.Index]
		j := quantizeTensorJSON{Index: i + 1, Name: t.Name, Shape: t.Shape, SourceType: src.Type.String(), Type: t.Type.String(),
			Converted: t.Quantize, SourceBytes: src.Size, Bytes: t.Bytes, DecidedBy: t.Reason.String(), Imatrix: t.ImatrixFrom, File: t.Output + 1}
		if t.Rule != nil {
			j.Rule = t.Rule.Index + 1
		}
		if fb := l.fallbacks[i]; fb != nil {
			j.Fallback, j.FallbackReason = fb.Rows, fb.Reason
			doc.RowFallbacks++
		}
		doc.Tensors = append(doc.Tensors, j)
		if plan.Outputs[t.Output].Skip {
			continue
		}
		if !isExtra(t, in) {
			doc.ModelBytes += src.Size
		}
		doc.QuantBytes += t.Bytes
	}
	return doc
}
