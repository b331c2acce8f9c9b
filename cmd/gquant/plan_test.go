package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/planner"
)

// gquantOutput runs a command line and returns its exit status and output.
func gquantOutput(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// planJSON runs a plan command line with --json and decodes the report.
func planJSON(t *testing.T, args ...string) *planner.Report {
	t.Helper()
	code, stdout, stderr := gquantOutput(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	rep, err := decodePlan(stdout)
	if err != nil {
		t.Fatalf("%s: output is not a JSON report: %v", strings.Join(args, " "), err)
	}
	return rep
}

// decodePlan reads a plan's JSON (schema gquant.plan/1) back into the
// planner's report, its warnings as their messages.
func decodePlan(text string) (*planner.Report, error) {
	var doc planDoc
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if doc.Schema != "gquant.plan/1" || doc.Report == nil || doc.Warnings == nil {
		return nil, fmt.Errorf("schema %q, warnings %v", doc.Schema, doc.Warnings)
	}
	rep := *doc.Report
	rep.Tensors = nil
	for i, t := range doc.Tensors {
		if t.Index != i+1 {
			return nil, fmt.Errorf("tensor %d has index %d", i, t.Index)
		}
		rep.Tensors = append(rep.Tensors, t.Tensor)
	}
	for _, w := range doc.Warnings {
		rep.Warnings = append(rep.Warnings, w.String())
	}
	return &rep, nil
}

// customQ turns a recipe file into llama-quantize's one-line --custom-q
// form, as COMMANDS.md does: comment lines dropped, lines joined by commas.
func customQ(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rules []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			rules = append(rules, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(rules, ",")
}

// goldenWorkDir makes a folder holding the reference inputs under the names
// COMMANDS.md uses and changes into it, so that quantize.imatrix.file (the
// imatrix path as given) comes out as in the reference's outputs.
func goldenWorkDir(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "split"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tiny-ds2-bf16.gguf", "tiny-ds2.imatrix.dat", "tiny-ds2.full.imatrix.dat",
		"split/tiny-ds2-bf16-00001-of-00002.gguf", "split/tiny-ds2-bf16-00002-of-00002.gguf"} {
		if err := os.Symlink(golden.Path(t, "e2e", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// The repack run's input is also the q4_k_m run's output: a writable
	// copy, as a user's earlier output would be (a plan over the read-only
	// golden file fails, as the run would).
	copyFile(t, filepath.Join(dir, "out-q4_k_m.gguf"), golden.Path(t, "e2e", "out-q4_k_m.gguf"))
	t.Chdir(dir)
}

// TestPlanGoldenSizes plans every llama-quantize run of golden/e2e/COMMANDS.md
// with the same arguments, through both `gquant plan` and `gquant quantize
// --dry-run`, and checks each planned file is exactly as large as the
// reference's output, and each tensor has the reference's type and size.
// The recipe run is also planned with gguf-split's --split-max-size 2M and
// checked against the reference's shards.
func TestPlanGoldenSizes(t *testing.T) {
	custom := customQ(t, golden.Path(t, "e2e", "recipe.txt"))
	customIQ := customQ(t, golden.Path(t, "e2e", "recipe-iq.txt"))
	e2e := golden.Path(t, "e2e")
	goldenWorkDir(t)
	for _, tc := range []struct {
		name  string
		args  []string // quantize arguments, as in COMMANDS.md
		files []string // the reference's outputs, relative to e2e/
	}{
		{"pure-q8_0", []string{"--pure", "tiny-ds2-bf16.gguf", "out-pure-q8_0.gguf", "Q8_0", "2"}, []string{"out-pure-q8_0.gguf"}},
		{"q4_k_m", []string{"tiny-ds2-bf16.gguf", "out-q4_k_m.gguf", "Q4_K_M", "2"}, []string{"out-q4_k_m.gguf"}},
		{"iq2_k-imat", []string{"--imatrix", "tiny-ds2.imatrix.dat", "tiny-ds2-bf16.gguf", "out-iq2_k-imat.gguf", "IQ2_K", "2"}, []string{"out-iq2_k-imat.gguf"}},
		{"iq4_ks-imat", []string{"--imatrix", "tiny-ds2.imatrix.dat", "tiny-ds2-bf16.gguf", "out-iq4_ks-imat.gguf", "IQ4_KS", "2"}, []string{"out-iq4_ks-imat.gguf"}},
		{"recipe", []string{"--imatrix", "tiny-ds2.imatrix.dat", "--custom-q", custom, "tiny-ds2-bf16.gguf", "out-recipe.gguf", "IQ2_K_R4", "2"}, []string{"out-recipe.gguf"}},
		{"repack", []string{"--repack", "out-q4_k_m.gguf", "out-q4_k_m-repacked.gguf", "Q4_K_R4", "2"}, []string{"out-q4_k_m-repacked.gguf"}},
		{"iq2_xs-imat", []string{"--imatrix", "tiny-ds2.full.imatrix.dat", "tiny-ds2-bf16.gguf", "out-iq2_xs-imat.gguf", "IQ2_XS", "2"}, []string{"out-iq2_xs-imat.gguf"}},
		{"recipe-iq", []string{"--imatrix", "tiny-ds2.full.imatrix.dat", "--custom-q", customIQ, "tiny-ds2-bf16.gguf", "out-recipe-iq.gguf", "IQ3_S", "2"}, []string{"out-recipe-iq.gguf"}},
		{"keep-split", []string{"--keep-split", "--imatrix", "tiny-ds2.imatrix.dat", "split/tiny-ds2-bf16-00001-of-00002.gguf", "split/out-iq4_ks.gguf", "IQ4_KS", "2"},
			[]string{"split/out-iq4_ks-00001-of-00002.gguf", "split/out-iq4_ks-00002-of-00002.gguf"}},
		// quantize writing shards directly, planned as gguf-split plans them.
		{"recipe-split-2M", []string{"--imatrix", "tiny-ds2.imatrix.dat", "--custom-q", custom, "tiny-ds2-bf16.gguf", "split/out-recipe", "IQ2_K_R4", "2", "--split-max-size", "2M"},
			[]string{"split/out-recipe-00001-of-00003.gguf", "split/out-recipe-00002-of-00003.gguf", "split/out-recipe-00003-of-00003.gguf"}},
	} {
		for _, cmd := range [][]string{{"plan"}, {"quantize", "--dry-run"}} {
			t.Run(tc.name+"/"+cmd[0], func(t *testing.T) {
				args := append(append([]string(nil), cmd...), tc.args...)
				if tc.name == "repack" {
					// The --repack form is planned by the repack package,
					// which prints its own dry run: check its file size line.
					code, stdout, stderr := gquantOutput(args...)
					if code != 0 {
						t.Fatalf("repack dry run: exit %d: %s", code, stderr)
					}
					st, err := os.Stat(filepath.Join(e2e, tc.files[0]))
					if err != nil {
						t.Fatal(err)
					}
					if want := fmt.Sprintf(": %d bytes", st.Size()); !strings.Contains(stdout, want) {
						t.Errorf("the repack dry run does not say %q:\n%s", want, stdout)
					}
					return
				}
				rep := planJSON(t, args...)
				if len(rep.Files) != len(tc.files) {
					t.Fatalf("%d files planned, the reference wrote %d", len(rep.Files), len(tc.files))
				}
				checkPlannedFiles(t, e2e, rep.Files, tc.files, true)
				checkPlannedTensors(t, rep, filepath.Join(e2e, tc.files[0]))
			})
		}
	}
}

// checkPlannedFiles compares planned files with the reference's: sizes
// always, paths when samePath.
func checkPlannedFiles(t *testing.T, e2e string, got []planner.File, want []string, samePath bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d files planned, want %d (%v)", len(got), len(want), want)
	}
	for i, f := range got {
		st, err := os.Stat(filepath.Join(e2e, want[i]))
		if err != nil {
			t.Fatal(err)
		}
		if samePath && filepath.Clean(f.Path) != want[i] {
			t.Errorf("file %d: planned path %s, reference %s", i, f.Path, want[i])
		}
		if f.Bytes != st.Size() {
			t.Errorf("%s: planned %d bytes, reference %d (off by %d)", want[i], f.Bytes, st.Size(), f.Bytes-st.Size())
		}
		if f.Overhead <= 0 || f.TensorBytes+f.Overhead != f.Bytes {
			t.Errorf("%s: %d tensor bytes + %d overhead != %d", want[i], f.TensorBytes, f.Overhead, f.Bytes)
		}
	}
}

// checkPlannedTensors compares each planned tensor with the reference
// output (a single file or the first shard of a set).
func checkPlannedTensors(t *testing.T, rep *planner.Report, ref string) {
	t.Helper()
	m, err := gguf.Open(ref)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.Tensors) != len(rep.Tensors) {
		t.Fatalf("%d tensors planned, the reference wrote %d", len(rep.Tensors), len(m.Tensors))
	}
	for i, want := range m.Tensors {
		got := rep.Tensors[i]
		if got.Name != want.Name || got.Type != want.Type.String() || got.Bytes != want.Size || got.File != want.Shard {
			t.Errorf("tensor %d: planned %s %s %d bytes in file %d, reference %s %s %d bytes in file %d",
				i, got.Name, got.Type, got.Bytes, got.File, want.Name, want.Type, want.Size, want.Shard)
		}
	}
}

// TestPlanMatchesOwnOutputs quantizes the repository's small model for
// several file types (and as a --keep-split shard set) and checks that the
// plan made beforehand gives every file's exact size.
func TestPlanMatchesOwnOutputs(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "..", "testdata", "tiny-deepseek2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(src); err != nil {
		t.Skipf("test model missing: %v", err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Symlink(src, "in.gguf"); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := gquantOutput("split", "--split-max-tensors", "20", "in.gguf", "shards/in"); code != 0 {
		t.Fatalf("split: %s", stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"q8_0", []string{"in.gguf", "out-q8_0.gguf", "Q8_0"}},
		{"q4_0", []string{"in.gguf", "out-q4_0.gguf", "Q4_0"}},
		{"q5_1", []string{"in.gguf", "out-q5_1.gguf", "Q5_1"}},
		{"f16", []string{"in.gguf", "out-f16.gguf", "F16"}},
		{"bf16-pure", []string{"--pure", "in.gguf", "out-bf16.gguf", "BF16"}},
		{"copy", []string{"in.gguf", "out-copy.gguf", "COPY"}},
		{"rules-overrides", []string{"--custom-q", `exps=q4_0,attn_.*=q5_0`, "--token-embedding-type", "q8_0",
			"--override-kv", "general.name=str:planned", "in.gguf", "out-rules.gguf", "Q8_0"}},
		{"keep-split", []string{"--keep-split", "shards/in-00001-of-00003.gguf", "out-split.gguf", "Q4_0"}},
		{"split-limits", []string{"--split-max-tensors", "25", "--split-max-size", "1MiB", "in.gguf", "out-limits", "Q8_0"}},
		{"extra-output", []string{"--extra-output-tensor", "q4_0", "in.gguf", "out-extra.gguf", "Q8_0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := planJSON(t, append([]string{"plan"}, tc.args...)...)
			code, _, stderr := gquantOutput(append([]string{"quantize"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("quantize: exit %d: %s", code, stderr)
			}
			var total int64
			for _, f := range rep.Files {
				st, err := os.Stat(f.Path)
				if err != nil {
					t.Fatalf("planned file not written: %v", err)
				}
				if st.Size() != f.Bytes {
					t.Errorf("%s: planned %d bytes, wrote %d", f.Path, f.Bytes, st.Size())
				}
				total += f.Bytes
			}
			if total != rep.Total.Bytes {
				t.Errorf("total %d, files add up to %d", rep.Total.Bytes, total)
			}
			if tc.name == "keep-split" && len(rep.Files) != 3 {
				t.Errorf("keep-split planned %d files, want 3", len(rep.Files))
			}
			if tc.name == "split-limits" && len(rep.Files) < 3 {
				t.Errorf("split limits planned %d files, want several", len(rep.Files))
			}
			if tc.name == "extra-output" && rep.Tensors[len(rep.Tensors)-1].Name != "output_extra.weight" {
				t.Errorf("no output_extra.weight planned last: %s", rep.Tensors[len(rep.Tensors)-1].Name)
			}
		})
	}
}

// TestPlanRecipeReport checks what the plan says about the reference recipe:
// the unanchored output\.weight rule, the rules it shadows, per-device bytes
// and the budget verdict.
func TestPlanRecipeReport(t *testing.T) {
	custom := customQ(t, golden.Path(t, "e2e", "recipe.txt"))
	goldenWorkDir(t)
	args := []string{"plan", "--imatrix", "tiny-ds2.imatrix.dat", "--custom-q", custom,
		"--place", "exps=CPU", "--place", ".*=GPU", "--budget", "CPU=1.5MiB,GPU=4MB",
		"tiny-ds2-bf16.gguf", "out-recipe.gguf", "IQ2_K_R4", "2"}

	code, stdout, stderr := gquantOutput(append(args, "--json")...)
	if code != 1 || !strings.Contains(stderr, "does not fit the budget") || !strings.Contains(stderr, "CPU holds") {
		t.Fatalf("over budget: exit %d (want 1), stderr %q", code, stderr)
	}
	rep, err := decodePlan(stdout)
	if err != nil {
		t.Fatal(err)
	}
	out := rep.Rules[1]
	if out.Pattern != `output\.weight` || out.Tensors != 5 || len(out.Unintended) != 4 || out.Suggestion != `^output\.weight$` {
		t.Errorf("output rule: %+v", out)
	}
	if attn := rep.Rules[5]; len(attn.Shadowed) != 3 || attn.Shadowed[0].Name != "blk.1.attn_output.weight" || attn.Shadowed[0].By != 2 {
		t.Errorf("attn rule shadowing: %+v", attn.Shadowed)
	}
	// Expert tensors of layers 1-3: 2 x iq2_k_r4 + 1 x iq3_k_r4 per layer.
	wantCPU := int64(3 * (2*155648 + 225280))
	if len(rep.Devices) != 2 || rep.Devices[0].Device != "CPU" || rep.Devices[0].Bytes != wantCPU || rep.Devices[0].Tensors != 9 {
		t.Fatalf("devices: %+v", rep.Devices)
	}
	cpu, gpu := rep.Devices[0].Budget, rep.Devices[1].Budget
	if cpu.Fits || cpu.Margin != 1572864-wantCPU || !gpu.Fits || rep.Devices[0].Bytes+rep.Devices[1].Bytes != rep.Total.TensorBytes {
		t.Errorf("budgets: CPU %+v GPU %+v", cpu, gpu)
	}

	code, text, stderr := gquantOutput(args...)
	if code != 1 {
		t.Fatalf("text: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"out-recipe.gguf  5018656 bytes",
		`probably unintended, matches inside a name component: blk.0.attn_output.weight ("output.weight")`,
		`suggestion: anchor it: ^output\.weight$=q6_K`,
		"loses 3 tensor(s) to earlier rules with another type: blk.1.attn_output.weight (q6_K from rule 2)",
		"budget 1.5MiB: DOES NOT FIT",
		"budget 4MB: fits",
		"budget: DOES NOT FIT on CPU",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
}

// TestPlanBadInput checks that bad placements, budgets and rules fail with
// a message pointing at the offending value: usage errors (2), but for a
// file a flag names that cannot be read (1, as for a missing --imatrix).
func TestPlanBadInput(t *testing.T) {
	goldenWorkDir(t)
	if err := os.WriteFile("place.txt", []byte("# experts\nexps=CPU\n\n.*=GPU\nffn_up_exps=GPU\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("twice.txt", []byte("exps=CPU\nexps=GPU\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("bad.txt", []byte("exps=q9_9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"tiny-ds2-bf16.gguf", "out.gguf", "Q8_0"}
	for _, tc := range []struct {
		name  string
		flags []string
		code  int
		want  []string // substrings of stderr
	}{
		{"unknown unit", []string{"--place", ".*=GPU", "--budget", "GPU=24XB"}, 2, []string{`"24XB"`, `unknown unit "XB"`, "GiB"}},
		{"no number", []string{"--place", ".*=GPU", "--budget", "GPU=GiB"}, 2, []string{`"GiB" is not a number`}},
		{"budget syntax", []string{"--place", ".*=GPU", "--budget", "24GiB"}, 2, []string{`"24GiB": want DEVICE=SIZE`}},
		{"budget twice", []string{"--place", ".*=GPU", "--budget", "GPU=1GiB", "--budget", "GPU=2GiB"}, 2, []string{"two budgets for GPU"}},
		{"budget unknown device", []string{"--place", ".*=GPU", "--budget", "CUDA0=1GiB"}, 2, []string{"CUDA0", "no placement rule puts anything on CUDA0"}},
		{"budgets without placement", []string{"--budget", "GPU=1GiB,CPU=1GiB"}, 2, []string{"without placement rules give exactly one budget"}},
		{"contradiction", []string{"--place", "exps=CPU,attn=GPU", "--place", "exps=GPU"}, 2, []string{"--place item 3", `"exps=GPU"`, "contradicts --place item 1"}},
		{"contradiction in file", []string{"--place-file", "twice.txt"}, 2, []string{"twice.txt:2", "contradicts twice.txt:1"}},
		{"fully shadowed", []string{"--place", ".*=GPU", "--place", "exps=CPU"}, 2, []string{"--place item 2", "already placed by --place item 1 .*=GPU", "move it before"}},
		{"fully shadowed in file", []string{"--place-file", "place.txt"}, 2, []string{"place.txt:5", "ffn_up_exps=GPU", "already placed by place.txt:2 exps=CPU"}},
		{"bad regex", []string{"--place", "blk.(=CPU"}, 2, []string{"--place item 1", "invalid regex"}},
		{"no device", []string{"--place", "exps"}, 2, []string{"want regex=DEVICE"}},
		{"missing place file", []string{"--place-file", "nope.txt"}, 1, []string{"nope.txt"}},
		{"missing recipe", []string{"--recipe", "nope.txt"}, 1, []string{"nope.txt"}},
		{"missing tensor type file", []string{"--tensor-type-file", "nope.txt"}, 1, []string{"nope.txt"}},
		// A directory cannot be read either, as for --imatrix.
		{"place file a directory", []string{"--place-file", "."}, 1, []string{"is not a regular file (a directory)"}},
		{"recipe a directory", []string{"--recipe", "."}, 1, []string{"is not a regular file (a directory)"}},
		{"tensor type file a directory", []string{"--tensor-type-file", "."}, 1, []string{"is not a regular file (a directory)"}},
		{"bad line in recipe", []string{"--recipe", "bad.txt"}, 2, []string{"bad.txt:1"}},
		{"recipe error", []string{"--custom-q", "exps=q4_0,attn=q9_9"}, 2, []string{"--custom-q", "item 2", "q9_9"}},
		{"split with keep-split", []string{"--keep-split", "--split-max-size", "2M"}, 2, []string{"--keep-split", "cannot be used together"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := gquantOutput(append(append([]string{"plan"}, tc.flags...), base...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestQuantizeRefusesOverBudget checks that a real run with a budget that
// does not fit stops before writing anything.
func TestQuantizeRefusesOverBudget(t *testing.T) {
	goldenWorkDir(t)
	code, _, stderr := gquantOutput("quantize", "--place", ".*=GPU", "--budget", "GPU=1MiB", "tiny-ds2-bf16.gguf", "out.gguf", "Q8_0")
	if code != 1 || !strings.Contains(stderr, "GPU holds") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if _, err := os.Stat("out.gguf"); !os.IsNotExist(err) {
		t.Errorf("output written despite the budget: %v", err)
	}
	// One budget without placement rules puts everything on its device,
	// as gquant fit reads the same options.
	code, _, stderr = gquantOutput("quantize", "--budget", "GPU=1MiB", "tiny-ds2-bf16.gguf", "out.gguf", "Q8_0")
	if code != 1 || !strings.Contains(stderr, "GPU holds") {
		t.Errorf("one budget without --place: exit %d, stderr %s", code, stderr)
	}
	if code, _, stderr = gquantOutput("plan", "--budget", "GPU=1GiB", "tiny-ds2-bf16.gguf", "out.gguf", "Q8_0"); code != 0 {
		t.Errorf("plan within one budget without --place: exit %d, stderr %s", code, stderr)
	}
}

// TestPlanChecksOutputs: a plan of a run that the output checks would
// refuse fails after printing the plan (an output that is an input, a
// read-only one, one without the room), and an existing output is only
// mentioned, the run needing --force.
func TestPlanChecksOutputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.gguf")
	copyFile(t, in, tinyModel)
	for _, cmd := range [][]string{{"plan"}, {"quantize", "--dry-run"}} {
		args := func(rest ...string) []string { return append(append([]string{}, cmd...), rest...) }
		stderr := failGquant(t, []string{"the run would stop before any work", "is the input"}, args("--summary", in, in, "Q4_K_M")...)
		var doc struct{ Schema, Refused string }
		if code, stdout, _ := runGquant(args("--json", in, in, "Q4_K_M")...); code != 1 || json.Unmarshal([]byte(stdout), &doc) != nil || !strings.Contains(doc.Refused, "is the input") {
			t.Errorf("%v --json onto the input: status %d, refused %q", cmd, code, doc.Refused)
		}
		if code, stdout, _ := runGquant(args("--summary", in, in, "Q4_K_M")...); code != 1 || stdout == "" {
			t.Errorf("%v onto the input: status %d, plan %q (want 1 after the plan)\n%s", cmd, code, stdout, stderr)
		}
		out := filepath.Join(dir, "out.gguf")
		if err := os.WriteFile(out, []byte("earlier"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runGquant(args("--summary", in, out, "Q4_K_M")...)
		if code != 0 || !strings.Contains(stderr, out+" exists: the run replaces it only with --force") {
			t.Errorf("%v over an existing output: status %d\n%s", cmd, code, stderr)
		}
		if code, _, stderr = runGquant(args("--summary", "--force", in, out, "Q4_K_M")...); code != 0 || strings.Contains(stderr, "exists") {
			t.Errorf("%v --force over an existing output: status %d\n%s", cmd, code, stderr)
		}
		if err := os.Chmod(out, 0o444); err != nil {
			t.Fatal(err)
		}
		failGquant(t, []string{"read-only"}, args("--summary", "--force", in, out, "Q4_K_M")...)
		os.Remove(out)
		// An earlier output to --reuse that is missing, or that is the
		// output, as the run's checks find.
		failGquant(t, []string{"the run would stop before any work", "nonexist.gguf"}, args("--summary", "--reuse", filepath.Join(dir, "nonexist.gguf"), in, out, "Q4_K_M")...)
		earlier := filepath.Join(dir, "earlier.gguf")
		copyFile(t, earlier, tinyModel)
		failGquant(t, []string{"the run would stop before any work", "earlier.gguf is the input"}, args("--summary", "--force", "--reuse", earlier, in, earlier, "Q4_K_M")...)
		os.Remove(earlier)
		// Another live process writing the output (this test's own
		// parent: alive, and not the process that checks).
		busy := filepath.Join(dir, fmt.Sprintf(".out.gguf.tmp-%d-abc", os.Getppid()))
		if err := os.WriteFile(busy, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		failGquant(t, []string{"being written by process"}, args("--summary", in, out, "Q4_K_M")...)
		os.Remove(busy)
		if got, _ := os.ReadDir(dir); len(got) != 1 {
			t.Errorf("%v wrote files: %v", cmd, got)
		}
	}
	free, ok := freeBytes(dir)
	if !ok || free > 600<<30 {
		t.Skip("cannot tell the free space, or more than 600 GiB free")
	}
	big := filepath.Join(dir, "r1.gguf")
	mustGquant(t, "testmodel", "--preset", "deepseek-r1", "--header-only", big)
	failGquant(t, []string{"not enough free space", "out.gguf"}, "plan", "--summary", big, filepath.Join(dir, "out.gguf"), "Q8_0")
}
