package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/internal/golden"
)

func runStreams(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// gquant --version, -V and gquant version print the same one line on
// stdout and nothing on stderr.
func TestVersion(t *testing.T) {
	want := cli.Version("gquant") + "\n"
	for _, args := range [][]string{{"--version"}, {"-V"}, {"version"}} {
		code, out, errOut := runStreams(args...)
		if code != 0 || out != want || errOut != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", args, code, out, errOut, want)
		}
	}
	if !strings.Contains(want, "kernels: ") || !strings.Contains(want, " go1.") {
		t.Errorf("version line %q lacks the Go version or the kernels", want)
	}
	code, out, _ := runStreams("version", "--json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || doc["schema"] != "gquant.version/1" || doc["version"] != strings.TrimSuffix(want, "\n") {
		t.Errorf("version --json: exit %d, %v, %v", code, err, doc)
	}
}

// The bash completion script passes bash -n and completes the real
// commands and flags.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	code, script, errOut := runStreams("completion", "bash")
	if code != 0 || errOut != "" {
		t.Fatalf("completion bash: exit %d, %q", code, errOut)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "gquant.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	lines := []string{
		"gquant qu", "gquant quantize --imat", "gquant plan --stri", "gquant split --split-max-s", "gquant rows ", "gquant rows quantize --co",
		"gquant completion f", "gquant imatrix", "gquant verify --imat",
	}
	want := []string{"quantize", "--imatrix", "--strict", "--split-max-size", "dequantize quantize", "--cols", "fish", "", "--imatrix"}
	var b strings.Builder
	b.WriteString("source " + path + "\ncd " + dir + "\n")
	for _, l := range lines {
		w := strings.Split(l, " ")
		b.WriteString("COMP_WORDS=(")
		for _, x := range w {
			b.WriteString("'" + x + "' ")
		}
		b.WriteString(")\nCOMP_CWORD=" + string(rune('0'+len(w)-1)) + "\nCOMPREPLY=()\n_gquant\nprintf '%s\\n' \"$(printf '%s\\n' \"${COMPREPLY[@]}\" | grep -v gquant.bash | sort | tr '\\n' ' ')\"\n")
	}
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", b.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i := range lines {
		if i >= len(got) || strings.TrimSpace(got[i]) != want[i] {
			t.Errorf("%q completes to %q, want %q", lines[i], got, want[i])
		}
	}
	// Every registered command is offered first.
	for name := range commandNames() {
		if !strings.Contains(script, " "+name+" ") && !strings.Contains(script, "\""+name+" ") {
			t.Errorf("command %s missing from the script", name)
		}
	}
}

func commandNames() map[string]bool {
	var out bytes.Buffer
	commands.Usage(&out)
	names := map[string]bool{}
	_, list, _ := strings.Cut(out.String(), "commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			names[f[0]] = true
		}
	}
	return names
}

// plan --strict exits 1 on any warning of the plan (here an unanchored
// rule that also matches attn_output), after printing the plan, text or
// JSON, on stdout; without warnings, or without --strict, it exits 0.
// quantize --strict needs --dry-run.
func TestPlanStrict(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	out := filepath.Join(t.TempDir(), "out.gguf")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"plan", "--strict", "--summary", "--custom-q", `output\.weight=q8_0`}, 1},
		{[]string{"plan", "--strict", "--json", "--custom-q", `output\.weight=q8_0`}, 1},
		{[]string{"quantize", "--dry-run", "--strict", "--summary", "--custom-q", `output\.weight=q8_0`}, 1},
		{[]string{"plan", "--summary", "--custom-q", `output\.weight=q8_0`}, 0},
		{[]string{"plan", "--strict", "--summary", "--custom-q", `^output\.weight$=q8_0`}, 0},
	} {
		code, stdout, stderr := runStreams(append(tc.args, model, out, "Q4_K_M")...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d\n%s", tc.args, code, tc.code, stderr)
		}
		if !strings.Contains(stdout, "bits per weight") && !strings.Contains(stdout, `"bits_per_weight"`) {
			t.Errorf("%q: no plan on stdout:\n%s", tc.args, stdout)
		}
		if strict := strings.Contains(stderr, "--strict: the plan has 1 warning(s)"); strict != (tc.code == 1) {
			t.Errorf("%q: stderr %q", tc.args, stderr)
		}
	}
	code, _, stderr := runStreams("quantize", "--strict", model, out, "Q4_K_M")
	if code != 2 || !strings.Contains(stderr, "--strict fails a plan with warnings: it needs --dry-run") {
		t.Errorf("quantize --strict without --dry-run: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a plan wrote %s", out)
	}
}

// --record-tool writes the version line as quantize.tool; without it the
// key is absent (the output stays the reference's byte for byte), and an
// --override-kv of the key wins over it.
func TestRecordTool(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string // "" for absent
	}{
		{nil, ""},
		{[]string{"--record-tool"}, cli.Version("gquant")},
		{[]string{"--record-tool", "--override-kv", "quantize.tool=str:mine"}, "mine"},
	} {
		out := filepath.Join(dir, strings.Join(append([]string{"out"}, tc.args...), "_")+".gguf")
		args := append(append([]string{"quantize"}, tc.args...), model, out, "Q8_0")
		if code, _, stderr := runStreams(args...); code != 0 {
			t.Fatalf("%q: exit %d\n%s", args, code, stderr)
		}
		m, err := gguf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		got, present, err := m.Metadata.LookupText("quantize.tool")
		m.Close()
		if err != nil || present != (tc.want != "") || got != tc.want {
			t.Errorf("%q: quantize.tool %q (present %v, %v), want %q", tc.args, got, present, err, tc.want)
		}
	}
}
