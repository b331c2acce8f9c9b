package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// refStdoutLines are what llama-quantize prints with printf (stdout). Its
// stdout is buffered, so in a log of both streams these lines land inside
// the first tensor's line; cutting them out leaves what it wrote on stderr.
var refStdoutLines = regexp.MustCompile(`(Adding custom rule |load_imatrix: |prepare_imatrix: )[^\n]*\n`)

// tensorLog is the part of a log from the first tensor line through the
// size summary (and the fallback count after it), as lines.
func tensorLog(text string) []string {
	start := strings.Index(text, "[   1/")
	if start < 0 {
		return nil
	}
	lines := strings.Split(text[start:], "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, refFunc+": quant size") {
			end := i + 1
			if end < len(lines) && strings.HasPrefix(lines[end], refFunc+": WARNING:") {
				end++
			}
			return lines[:end]
		}
	}
	return lines
}

// checkRunLog compares a run's streams with the reference's log: the
// per-tensor lines and the size summary on stderr line for line (sizes,
// types, notes; the timing lines are not compared), the rule and
// importance-matrix lines and the timing lines on stdout, none of the
// reference's stderr lines on stdout.
func checkRunLog(t *testing.T, logPath, stdout, stderr string) {
	t.Helper()
	ref, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	want := tensorLog(refStdoutLines.ReplaceAllString(string(ref), ""))
	got := tensorLog(stderr)
	if len(want) == 0 {
		t.Fatalf("%s: no tensor lines", logPath)
	}
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s line %d of the tensor log:\n got %q\nwant %q", logPath, i+1, g, w)
			break
		}
	}
	for _, l := range refStdoutLines.FindAllString(string(ref), -1) {
		if !strings.Contains(stdout, l) {
			t.Errorf("stdout lacks the reference's %q", l)
		}
	}
	if !regexp.MustCompile(`\nmain: quantize time = +\d+\.\d\d ms\nmain:    total time = +\d+\.\d\d ms\n$`).MatchString(stdout) {
		t.Errorf("stdout does not end with the timing lines:\n%s", stdout)
	}
	if strings.ContainsAny(stderr, "\r\x1b") {
		t.Error("a progress bar on a stream that is not a terminal")
	}
	if strings.Contains(stdout, "[   1/") || strings.Contains(stdout, "model size") || strings.Contains(stderr, "quantize time") {
		t.Error("a line is on the wrong stream")
	}
	if !strings.HasPrefix(stderr, "main: quantizing '") {
		t.Errorf("stderr does not start with the reference's first line: %.80q", stderr)
	}
}

// quantize --json without --dry-run prints the run's summary as the only
// thing on stdout; the reference's stdout lines go to stderr then.
func TestQuantizeJSONSummary(t *testing.T) {
	chdirE2E(t)
	out := filepath.Join(t.TempDir(), "out.gguf")
	code, stdout, stderr := runStreams("quantize", "--json", "--imatrix", "tiny-ds2.imatrix.dat", "tiny-ds2-bf16.gguf", out, "IQ4_KS", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc quantizeDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "gquant.quantize/1" || len(doc.Outputs) != 1 || doc.Outputs[0].Bytes != st.Size() || doc.Outputs[0].Index != 1 ||
		len(doc.Tensors) != 74 || doc.Tensors[73].Index != 74 || doc.Tensors[73].Type != "q6_K" || doc.Imatrix != "tiny-ds2.imatrix.dat" {
		t.Errorf("summary: %+v", doc)
	}
	// The reference's size summary, to the hundredth of a MiB.
	if got := fmt.Sprintf("%.2f %.2f", mib(doc.ModelBytes), mib(doc.QuantBytes)); got != "15.79 4.96" {
		t.Errorf("model and quant size %s, the reference's log says 15.79 4.96", got)
	}
	if len(doc.Warnings) != 1 || doc.Warnings[0].Kind != "no-imatrix" || doc.Warnings[0].Tensor != "token_embd.weight" {
		t.Errorf("warnings %+v", doc.Warnings)
	}
	if !strings.Contains(stderr, "load_imatrix: loaded 50 importance matrix entries") || !strings.Contains(stderr, "[  74/  74]") {
		t.Errorf("stderr lacks the log:\n%s", stderr)
	}
}

// Rows the reference cannot quantize are one warning per tensor, after its
// line, naming the rows; the JSON summary lists them per tensor.
func TestRunLogFallbackRows(t *testing.T) {
	in, err := gguf.Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	plan, err := pipeline.Build(in, pipeline.Config{Selection: recipes.Options{FileType: recipes.FileTypeQ8_0}, Output: "x.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	l := newRunLog(&stderr, io.Discard, in, plan, false)
	i := 4
	name := plan.Tensors[i].Name
	fb := &pipeline.Fallback{Type: formats.IQ2_XXS, Rows: []int64{3, 17}, Reason: "why"}
	l.event(pipeline.Event{Index: i, Count: len(plan.Tensors), Name: name, Done: 10, Bytes: 10, Finished: true, Fallback: fb})
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	want := "warning: " + name + ": iq2_xxs rows 3, 17: why (llama-quantize stops on these rows)"
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "[   5/  74]") || lines[1] != want {
		t.Errorf("log:\n%s\nwant the tensor line and %q", stderr.String(), want)
	}
	doc := newQuantizeDoc(in, plan, "", l, l.warnings, 0)
	if rows := doc.Tensors[i].Fallback; len(rows) != 2 || rows[1] != 17 || doc.Warnings[0].Kind != "reference-abort-rows" || doc.Warnings[0].Tensor != name {
		t.Errorf("JSON: rows %v, warnings %+v", rows, doc.Warnings)
	}
	if doc.Tensors[i].FallbackReason != "why" || doc.RowFallbacks != 1 || doc.Fallbacks != 0 {
		t.Errorf("JSON: reason %q, row_fallbacks %d, fallbacks %d", doc.Tensors[i].FallbackReason, doc.RowFallbacks, doc.Fallbacks)
	}
}

// An importance entry for token_embd.weight of another size is ignored
// with the reference's line (not "did not find weights"); a tensor
// without an entry gets that one.
func TestRunLogImatrixSizeIgnored(t *testing.T) {
	in, err := gguf.Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var q int // a quantized tensor other than token_embd
	for i, ti := range in.Tensors {
		if ti.Name != "token_embd.weight" && len(ti.Shape) == 2 && ti.Shape[1] > 1 {
			q = i
			break
		}
	}
	im := &imatrix.Matrix{Entries: []imatrix.Entry{{Name: "token_embd.weight", Sums: []float32{1, 2, 3}, Counts: []float64{1}}}}
	plan, err := pipeline.Build(in, pipeline.Config{Selection: recipes.Options{FileType: recipes.FileTypeQ8_0}, Imatrix: im, Output: "x.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	for i, tp := range plan.Tensors {
		text := tensorText(in, plan, i, true)
		switch src := in.Tensors[tp.Index]; {
		case src.Name == "token_embd.weight":
			want := fmt.Sprintf("\n====== llama_model_quantize_internal: imatrix size 3 is different from tensor size %d for token_embd.weight\n", src.Shape[0])
			if !strings.Contains(text, want) || strings.Contains(text, "did not find") {
				t.Errorf("token_embd.weight:\n%s\nwant %q", text, want)
			}
		case i == q:
			if !strings.Contains(text, "did not find weights for "+src.Name) {
				t.Errorf("%s:\n%s", src.Name, text)
			}
		}
	}
}

// A failed run ends with llama-quantize's closing line, which scripts grep
// for; a usage error and a dry run do not.
func TestRunLogFailedLine(t *testing.T) {
	dir := t.TempDir()
	in := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	out := filepath.Join(dir, "o.gguf")
	missing := filepath.Join(dir, "none.dat")
	want := "main: failed to quantize model from '"
	for _, tc := range []struct {
		args []string
		line bool
	}{
		{[]string{"quantize", filepath.Join(dir, "none.gguf"), out, "Q4_K_M"}, true},
		{[]string{"quantize", "--imatrix", missing, in, out, "Q4_K_M"}, false}, // the reference stops before it starts
		{[]string{"quantize", in, out, "IQ2_XS"}, false},                       // likewise
		{[]string{"quantize", "--dry-run", filepath.Join(dir, "none.gguf"), out, "Q4_K_M"}, false},
		{[]string{"quantize", "--imatrx", missing, in, out, "Q4_K_M"}, false},
	} {
		code, _, stderr := runStreams(tc.args...)
		if code == 0 || strings.Contains(stderr, want) != tc.line {
			t.Errorf("%q: exit %d, stderr:\n%s", tc.args, code, stderr)
		}
		// The reference's banner for a file type refused without an
		// importance matrix, as it prints it (its stderr, captured).
		if tc.args[len(tc.args)-1] == "IQ2_XS" && !strings.HasPrefix(stderr, "\n"+strings.Repeat("=", 106)+
			"\nPlease do not use IQ1_S, IQ1_M, IQ2_S, IQ2_XXS, IQ2_XS or Q2_K_S quantization without an importance matrix\n"+
			strings.Repeat("=", 106)+"\n\n\ngquant quantize: ") {
			t.Errorf("IQ2_XS without an importance matrix: stderr\n%s", stderr)
		}
	}
}

// The reference prints two lines on stdout when it first quantizes iq4_kt
// (building the codebook, one cluster stays empty); gquant prints them
// there too, once, and not for other types.
func TestRunLogIQ4KTClusterLines(t *testing.T) {
	in := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	dir := t.TempDir()
	for _, tc := range []struct {
		rule  string
		lines int
	}{
		{`blk\.0\.attn_(q_a|kv_a_mqa)\.weight=iq4_kt`, 1},
		{`blk\.0\.attn_q_a\.weight=iq4_ks`, 0},
	} {
		code, stdout, stderr := runStreams("quantize", "--force", "--custom-q", tc.rule, in, filepath.Join(dir, "o.gguf"), "Q8_0")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.rule, code, stderr)
		}
		if n := strings.Count(stdout, iq4ktClusterLines); n != tc.lines || strings.Count(stdout, "cluster_points") != 2*tc.lines {
			t.Errorf("%s: %d times\n%s", tc.rule, n, stdout)
		}
		if tc.lines > 0 && !strings.Contains(stdout, "prepare_imatrix") && !strings.Contains(stdout, "Adding custom rule") {
			t.Errorf("%s: stdout lacks the lines before:\n%s", tc.rule, stdout)
		}
	}
}
