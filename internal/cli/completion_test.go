package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// testSet is a program with a command with flags ("make"), one with
// subcommands only ("tool a", "tool b") and the completion command.
func testSet() *Set {
	s := &Set{Program: "prog"}
	s.Register(&Command{Name: "make", Summary: "make a thing: it's [fast]", Run: func(args []string, stdout, stderr io.Writer) int {
		fs := pflag.NewFlagSet("make", pflag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.StringP("output", "o", "", "output `FILE`")
		fs.Bool("json", false, "print JSON: one document")
		fs.StringArray("rule", nil, "a rule; repeatable")
		fs.Usage = func() {
			fmt.Fprintln(stderr, "usage: prog make [flags] IN\n\nflags:")
			fs.PrintDefaults()
			fmt.Fprintln(stderr, "\nExample:\n  prog make --rule x in.gguf")
		}
		if err := fs.Parse(args); err != nil {
			return 2
		}
		return 0
	}})
	s.Register(&Command{Name: "tool", Summary: "tools", Run: func(args []string, stdout, stderr io.Writer) int {
		if len(args) > 0 && args[0] == "a" {
			fs := pflag.NewFlagSet("a", pflag.ContinueOnError)
			fs.SetOutput(stderr)
			fs.Int("cols", 0, "columns")
			if err := fs.Parse(args[1:]); err != nil {
				return 2
			}
			return 0
		}
		fmt.Fprintln(stdout, "usage: prog tool a --cols N\n       prog tool b")
		return 2
	}})
	s.Register(CompletionCommand(s))
	return s
}

func TestParseHelp(t *testing.T) {
	s := testSet()
	comps := s.completions()
	var names []string
	for _, c := range comps {
		names = append(names, c.Name)
	}
	if want := []string{"completion", "make", "tool", "tool a"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("commands %q, want %q", names, want)
	}
	mk := comps[1]
	want := []compFlag{
		{Long: "json", Usage: "print JSON: one document"},
		{Long: "output", Short: "o", Value: true, Usage: "output FILE"},
		{Long: "rule", Value: true, Usage: "a rule; repeatable"},
	}
	if !reflect.DeepEqual(mk.Flags, want) || mk.Subs != nil {
		t.Errorf("make: %+v subs %q", mk.Flags, mk.Subs)
	}
	if tool := comps[2]; !reflect.DeepEqual(tool.Subs, []string{"a", "b"}) || len(tool.Flags) != 0 || !tool.subRequired() {
		t.Errorf("tool: %+v", tool)
	}
	if a := comps[3]; len(a.Flags) != 1 || a.Flags[0].Long != "cols" || !a.Flags[0].Value {
		t.Errorf("tool a: %+v", a)
	}
	if c := comps[0]; !reflect.DeepEqual(c.Subs, shells) {
		t.Errorf("completion: %+v", c)
	}
}

// script runs the completion command for shell and writes its script to a
// file.
func script(t *testing.T, s *Set, shell string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := s.Run([]string{"completion", shell}, &out, &errOut); code != 0 || errOut.Len() > 0 {
		t.Fatalf("completion %s: exit %d, %s", shell, code, errOut.String())
	}
	path := filepath.Join(t.TempDir(), "script."+shell)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bashComplete sources a bash completion script and returns what it
// offers for each command line (the last word is the one completed), in
// dir so that file names are predictable.
func bashComplete(t *testing.T, scriptPath, dir, fn string, lines ...[]string) [][]string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "source %q\ncd %q\n", scriptPath, dir)
	for _, l := range lines {
		fmt.Fprintf(&b, "COMP_WORDS=(")
		for _, w := range l {
			fmt.Fprintf(&b, "%q ", w)
		}
		fmt.Fprintf(&b, "); COMP_CWORD=%d; COMPREPLY=(); %s; echo \"${COMPREPLY[*]}\"\n", len(l)-1, fn)
	}
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", b.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	var res [][]string
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		res = append(res, strings.Fields(l))
	}
	if len(res) != len(lines) {
		t.Fatalf("bash printed %d lines for %d command lines:\n%s", len(res), len(lines), out)
	}
	return res
}

func TestCompletionScripts(t *testing.T) {
	s := testSet()
	for _, shell := range shells {
		path := script(t, s, shell)
		if _, err := exec.LookPath(shell); err != nil {
			t.Logf("%s not installed: syntax not checked", shell)
			continue
		}
		if out, err := exec.Command(shell, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s -n rejects the script: %v\n%s", shell, err, out)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.gguf"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := bashComplete(t, script(t, s, "bash"), dir, "_prog",
		[]string{"prog", ""}, []string{"prog", "ma"}, []string{"prog", "make", "--o"}, []string{"prog", "make", "-o", ""},
		[]string{"prog", "make", "--json", ""}, []string{"prog", "tool", ""}, []string{"prog", "tool", "a", "--"},
		[]string{"prog", "completion", "z"}, []string{"prog", "help", "t"})
	want := [][]string{
		{"completion", "make", "tool", "help", "--help", "--version"}, {"make"}, {"--output"}, {"in.gguf"},
		{"in.gguf"}, {"a", "b"}, {"--cols", "--help"}, {"zsh"}, {"tool"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bash completions\n got %q\nwant %q", got, want)
	}
	if _, err := exec.LookPath("fish"); err == nil {
		path := script(t, s, "fish")
		out, err := exec.Command("fish", "--no-config", "-c", "source "+path+"; complete -C 'prog make --o'; complete -C 'prog tool '").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--output\toutput FILE") || !strings.Contains(string(out), "a\n") {
			t.Errorf("fish: %v\n%s", err, out)
		}
		// After help, the commands only, as bash and zsh complete them.
		out, err = exec.Command("fish", "--no-config", "-c", "cd "+dir+"; source "+path+"; complete -C 'prog help '").CombinedOutput()
		if got := strings.Fields(string(out)); err != nil || !reflect.DeepEqual(got, []string{"completion", "make", "tool"}) {
			t.Errorf("fish: prog help: %v, %q, want the commands", err, got)
		}
	}
	var out, errOut bytes.Buffer
	if code := s.Run([]string{"completion", "tcsh"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown shell") {
		t.Errorf("completion tcsh: exit %d, %q", code, errOut.String())
	}
	if code := s.Run([]string{"completion"}, &out, &errOut); code != 2 {
		t.Errorf("completion without a shell: exit %d", code)
	}
	errOut.Reset()
	if code := s.Run([]string{"completion", "--json", "bash"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown flag --json") {
		t.Errorf("completion --json bash: exit %d, %q", code, errOut.String())
	}
	out.Reset()
	if code := s.Run([]string{"completion", "--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage: prog completion bash|zsh|fish") {
		t.Errorf("completion --help: exit %d, %q", code, out.String())
	}
}
