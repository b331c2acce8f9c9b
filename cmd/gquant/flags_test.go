package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// Every command prints its help on stdout and exits 0, for CMD --help,
// CMD -h and help CMD alike; nothing goes to stderr.
func TestHelpEveryCommand(t *testing.T) {
	for name := range commandNames() {
		code, want, errOut := runStreams(name, "--help")
		if code != 0 || errOut != "" || !strings.HasPrefix(want, "usage: gquant "+name) {
			t.Errorf("%s --help: exit %d, stdout %.80q, stderr %q", name, code, want, errOut)
			continue
		}
		for _, args := range [][]string{{"help", name}, {name, "-h"}} {
			if code, out, errOut := runStreams(args...); code != 0 || errOut != "" || out != want {
				t.Errorf("%q: exit %d, stderr %q, stdout differs from --help's: %.80q", args, code, errOut, out)
			}
		}
	}
	for _, args := range [][]string{{"rows", "quantize", "--help"}, {"fit", "calibrate", "--help"}, {"help", "fit", "calibrate"}} {
		if code, out, errOut := runStreams(args...); code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: gquant "+args[0]) && !strings.HasPrefix(out, "usage: gquant "+args[1]) {
			t.Errorf("%q: exit %d, stdout %.80q, stderr %q", args, code, out, errOut)
		}
	}
}

// A flag a command does not have is a usage error on every command: the
// message, the command's usage line and the pointer to its --help on
// stderr, nothing on stdout, exit status 2.
func TestUnknownFlagEveryCommand(t *testing.T) {
	for name := range commandNames() {
		args := []string{name, "--no-such-flag", "x", "y"}
		if name == "rows" || name == "completion" {
			continue // subcommands first: below
		}
		code, out, errOut := runStreams(args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "gquant "+name+": unknown flag --no-such-flag") ||
			!strings.Contains(errOut, "\nusage: gquant "+name) || !strings.HasSuffix(errOut, "Run 'gquant "+name+" --help' for every flag.\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	code, out, errOut := runStreams("rows", "quantize", "--no-such-flag")
	if code != 2 || out != "" || !strings.Contains(errOut, "gquant rows quantize: unknown flag --no-such-flag") {
		t.Errorf("rows quantize: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// The mistakes of issue 17, each with the message a user can act on.
func TestUsageErrors(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	for _, tc := range []struct {
		args []string
		want []string // lines or parts of lines of stderr
	}{
		{[]string{"quantize", "--imatirx", "x.dat", model, out, "IQ2_K"},
			[]string{"gquant quantize: unknown flag --imatirx; did you mean --imatrix?", "usage: gquant quantize [flags] IN.gguf [OUT.gguf] TYPE [THREADS]"}},
		{[]string{"quantize", model, out, "Q4_K_M", "-1"},
			[]string{"gquant quantize: invalid thread count -1: THREADS is 0 or more (0 or none: every core)"}},
		{[]string{"quantize", model, out, "Q4_K_M", "two"}, []string{`gquant quantize: invalid thread count "two"`}},
		{[]string{"quantize", model}, []string{"gquant quantize: need IN and TYPE"}},
		{[]string{"quantize", model, out, "Q4_K_Q"}, []string{"gquant quantize: ", "Q4_K_Q"}},
		{[]string{"quantize", "--custmo-q", "a=q8_0", model, out, "Q8_0"}, []string{"did you mean --custom-q?"}},
		{[]string{"quantize", "--target-bpw", "4.5", model, out, "Q8_0"}, []string{"--target-bpw: mainline llama.cpp's automatic type choice is not supported; use 'gquant fit --budget"}},
		{[]string{"quantize", "--tensor-type", "attn_q", model, out, "Q8_0"}, []string{"--tensor-type item 1", "want PATTERN=TYPE"}},
		{[]string{"quantize", "--json", model, out, "Q8_0", "--output-tensor-type"}, []string{"--output-tensor-type needs a value"}},
		{[]string{"quantize", model, out, "Q4_0", "99999999999"}, []string{"gquant quantize: invalid thread count 99999999999: out of range"}},
		{[]string{"quantize", model, out, "-1"}, []string{`gquant quantize: recipes: unknown file type "-1"`}},
		{[]string{"plan", model, "Q4_0", "-3"}, []string{"gquant plan: invalid thread count -3: THREADS is 0 or more"}},
		{[]string{"quantize", model, out, "Q4_0", "2", "extra"}, []string{`gquant quantize: unexpected arguments ["extra"]`}},
		{[]string{"plan", "--budgte", "GPU=1GiB", model, "Q8_0"}, []string{"did you mean --budget?", "usage: gquant plan"}},
		{[]string{"split", "--split-max-tensors", "abc", "in", "p"}, []string{`gquant split: --split-max-tensors "abc": not a whole number`, "usage: gquant split"}},
		{[]string{"split", "--split-max-size", "2X", model, filepath.Join(dir, "p")}, []string{"gquant split: --split-max-size"}},
		{[]string{"split", model}, []string{"gquant split: want IN and PREFIX, got 1 argument(s)"}},
		{[]string{"split", "--merge", model, out}, []string{"gquant split: --merge: use 'gquant merge SHARD OUT'"}},
		{[]string{"merge", model}, []string{"gquant merge: want SHARD and OUT, got 1 argument(s)"}},
		{[]string{"repack", "--undo", model}, []string{"gquant repack: want IN and OUT, got 1 argument(s)"}},
		{[]string{"testmodel"}, []string{"gquant testmodel: want OUT.gguf, got 0 argument(s)"}},
		{[]string{"testmodel", "--preset", "nope", out}, []string{"gquant testmodel: "}},
		{[]string{"inspect", "--jsn", model}, []string{"did you mean --json?"}},
		{[]string{"inspect"}, []string{"gquant inspect: want one FILE, got 0 argument(s)"}},
		{[]string{"hash", "--sha265", model}, []string{"did you mean --sha256?"}},
		{[]string{"hash"}, []string{"gquant hash: want one FILE or more"}},
		{[]string{"rows", "quantize", "--type", "q4_0", "in"}, []string{"gquant rows quantize: want IN and OUT, got 1 argument(s)"}},
		{[]string{"rows", "quantise"}, []string{`gquant rows: unknown subcommand "quantise"`}},
		{[]string{"fit", "--budet", "GPU=1GiB", model}, []string{"did you mean --budget?"}},
		{[]string{"fit", "--budget", "GPU=1GiB"}, []string{"gquant fit: need exactly one input model", "usage: gquant fit"}},
		{[]string{"quantise", model}, []string{`gquant: unknown command "quantise"; did you mean quantize?`}},
	} {
		code, stdout, stderr := runStreams(tc.args...)
		if slices.Contains(tc.args, "--json") && strings.Contains(stdout, `"schema": "gquant.error/1"`) {
			stdout = "" // the error document of a --json run (TestJSONErrorDocument)
		}
		if code != 2 || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, stdout, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr lacks %q:\n%s", tc.args, w, stderr)
			}
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a usage error wrote %s", out)
	}
}

// Without OUT the output is named as llama-quantize names it: after the
// entry of its type list the argument matched, so a number is the first
// entry of its value (15 is the alias Q4_K, listed before Q4_K_M).
func TestDefaultOutputNameAsReference(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.gguf")
	data, err := os.ReadFile(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arg, want, fileType string }{
		{"15", "ggml-model-Q4_K.gguf", "Q4_K_M"},
		{"Q4_K", "ggml-model-Q4_K.gguf", "Q4_K_M"},
		{"q4_k_m", "ggml-model-Q4_K_M.gguf", "Q4_K_M"},
		{"12", "ggml-model-Q3_K.gguf", "Q3_K_M"},
		{"q5_k", "ggml-model-Q5_K.gguf", "Q5_K_M"},
		{"7", "ggml-model-Q8_0.gguf", "Q8_0"},
		{"0", "ggml-model-F32.gguf", "F32"},
		{"copy", "ggml-model-COPY.gguf", "BF16"}, // the types of the input
		{"iq4_ks", "ggml-model-IQ4_KS.gguf", "IQ4_KS"},
	} {
		code, stdout, stderr := runStreams("quantize", "--dry-run", "--json", model, tc.arg)
		var doc struct {
			FileType string `json:"file_type"`
			Files    []struct{ Path string }
		}
		if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || len(doc.Files) != 1 {
			t.Errorf("%s: exit %d, stderr %q, stdout %.200q", tc.arg, code, stderr, stdout)
			continue
		}
		if got := doc.Files[0].Path; got != filepath.Join(dir, tc.want) || doc.FileType != tc.fileType {
			t.Errorf("%s: output %s, file type %s; want %s, %s", tc.arg, got, doc.FileType, tc.want, tc.fileType)
		}
	}
}

// dryRunPlan runs a --dry-run --json command line and returns the
// warnings of one kind and each tensor's type.
func dryRunPlan(t *testing.T, kind string, args ...string) (warnings []string, types map[string]string) {
	t.Helper()
	code, stdout, stderr := runStreams(args...)
	var doc struct {
		Warnings []struct{ Kind, Message string }
		Tensors  []struct{ Name, Type string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
		t.Fatalf("%q: exit %d, stderr %q", args, code, stderr)
	}
	for _, w := range doc.Warnings {
		if w.Kind == kind {
			warnings = append(warnings, w.Message)
		}
	}
	types = map[string]string{}
	for _, tt := range doc.Tensors {
		types[tt.Name] = tt.Type
	}
	return warnings, types
}

// A --*-type option spelled otherwise than ggml (Q8_0 for q8_0) is
// applied, with a warning: llama-quantize would silently ignore it.
func TestTypeOptionSpellingWarns(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	spelling, types := dryRunPlan(t, "type-spelling", "quantize", "--dry-run", "--json", "--output-tensor-type", "Q8_0",
		"--attn-v-type", "q6_K", model, filepath.Join(t.TempDir(), "o.gguf"), "Q4_0")
	if len(spelling) != 1 || !strings.HasPrefix(spelling[0], `--output-tensor-type Q8_0: llama-quantize only knows the spelling "q8_0"`) {
		t.Errorf("type-spelling warnings %q, want one for --output-tensor-type", spelling)
	}
	if types["output.weight"] != "q8_0" {
		t.Errorf("output.weight is %q, want q8_0", types["output.weight"])
	}
}

// Flags after IN are applied, with a warning: llama-quantize reads flags
// only before IN and ignores them after THREADS. A negative number after a
// flag that takes a value is that value; one among the positional
// arguments is a positional argument.
func TestFlagsAfterInputWarn(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	out := filepath.Join(t.TempDir(), "o.gguf")
	q := newQuantizeFlags(io.Discard)
	late, status, done := q.parse("gquant quantize", []string{"--pure", model, out, "Q4_0", "-3", "--split-max-tensors", "-1", "-v"}, io.Discard, io.Discard)
	if done || !slices.Equal(q.pos, []string{model, out, "Q4_0", "-3"}) || !slices.Equal(late, []string{"--split-max-tensors", "-v"}) ||
		q.fs.Lookup("split-max-tensors").Value.String() != "-1" {
		t.Errorf("parse: done %v (%d), positional %q, late %q, --split-max-tensors %s", done, status, q.pos, late, q.fs.Lookup("split-max-tensors").Value)
	}
	late, types := dryRunPlan(t, "flag-order", "quantize", "--dry-run", model, out, "Q4_0", "2", "--json", "--pure")
	if len(late) != 1 || !strings.HasPrefix(late[0], "--json --pure after IN.gguf: llama-quantize reads flags only before IN") {
		t.Errorf("flag-order warnings %q", late)
	}
	if types["output.weight"] != "q4_0" {
		t.Errorf("output.weight is %q: --pure was not applied", types["output.weight"])
	}
	// gquant plan is no llama-quantize command: no warning there.
	if late, _ := dryRunPlan(t, "flag-order", "plan", model, out, "Q4_0", "--json", "--pure"); len(late) != 0 {
		t.Errorf("plan: flag-order warnings %q", late)
	}
}

// llama-gguf-split's --split is accepted as the no-op it is here.
func TestSplitFlagAccepted(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	code, stdout, stderr := runStreams("split", "--split", "--split-max-tensors", "40", "--dry-run", model, filepath.Join(t.TempDir(), "p"))
	if code != 0 || !strings.Contains(stdout, "2 shards") {
		t.Errorf("split --split: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// --tensor-type takes one PATTERN=TYPE with mainline's semantics (the
// regex may hold commas, it is lower-cased) and keeps its place among
// --custom-q rules; --tensor-type-file reads rules separated by white
// space.
func TestTensorTypeFlag(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	dir := t.TempDir()
	ttFile := filepath.Join(dir, "types.txt")
	if err := os.WriteFile(ttFile, []byte("ffn_down_exps=q4_0\nffn_up_exps=q5_0  ffn_gate_exps=q5_0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.gguf")
	code, _, stderr := runStreams("quantize", "--pure",
		"--tensor-type", `BLK\.[1-2]{1,1}\.ATTN_Q_A=q8_0`, // commas and capitals: mainline's semantics
		"--custom-q", `attn_q_a=q6_K`,
		"--tensor-type-file", ttFile,
		model, out, "Q4_K")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	m, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := map[string]string{
		"blk.1.attn_q_a.weight": "q8_0", "blk.2.attn_q_a.weight": "q8_0", // --tensor-type, first
		"blk.3.attn_q_a.weight": "q6_K", "blk.0.attn_q_a.weight": "q6_K", // then --custom-q
		"blk.1.ffn_down_exps.weight": "q4_0", "blk.2.ffn_up_exps.weight": "q5_0", "blk.3.ffn_gate_exps.weight": "q5_0",
		"blk.1.ffn_down_shexp.weight": "q4_K", // no rule: --pure
	}
	for _, tt := range m.Tensors {
		if w, ok := want[tt.Name]; ok && tt.Type.String() != w {
			t.Errorf("%s: %s, want %s", tt.Name, tt.Type, w)
		}
	}
}

// Every command's help ends with two or three examples that use only
// flags the command has (TestHelpEveryCommand checks the streams).
func TestHelpExamples(t *testing.T) {
	for _, p := range commands.CheckExamples() {
		t.Error(p)
	}
}

// Every example of every help parses with its command's own flag set and
// arguments: run in an empty folder, each gets as far as its files (exit 1,
// or 0 for those that need none), never a usage error, except one that only
// says a file the example names is not there. Absolute paths are taken
// into the folder.
func TestHelpExamplesParse(t *testing.T) {
	t.Chdir(t.TempDir())
	runs := commands.ExampleRuns()
	if len(runs) < 2*len(commandNames()) {
		t.Fatalf("%d example lines, want two or more for each of %d commands", len(runs), len(commandNames()))
	}
	for _, ex := range runs {
		args := slices.Clone(ex.Args)
		for i, a := range args {
			if filepath.IsAbs(a) {
				args[i] = filepath.Base(a)
			}
		}
		code, _, stderr := runStreams(args...)
		if code == 2 {
			t.Errorf("%s --help: example %q is a usage error:\n%s", ex.Help, ex.Line, stderr)
		}
	}
}

// quantize --help lists every file type as llama-quantize's usage does,
// marking the ones its command line does not offer.
func TestQuantizeHelpFileTypes(t *testing.T) {
	_, out, _ := runStreams("quantize", "--help")
	for _, want := range []string{
		"   33  or  Q4_0_4_4   : q4_0_4x4    4.500 bpw\n",
		"   41  or  Q1_0_G128  : q1_0_g128   1.125 bpw  (not in llama-quantize's list; its library writes it)\n",
		"           COPY       : only copy tensors, no quantizing\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("quantize --help lacks %q", want)
		}
	}
}
