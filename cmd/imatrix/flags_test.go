package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every subcommand: --help on stdout with exit 0; a mistyped flag or wrong
// arguments on stderr with the closest flag, the usage line and exit 2.
func TestFlagErrors(t *testing.T) {
	for _, sub := range []string{"inspect", "convert", "merge", "check", "stats", "version"} {
		status, out, errOut := runCmd(t, sub, "--help")
		if status != 0 || errOut != "" || !strings.HasPrefix(out, "usage: imatrix "+sub) {
			t.Errorf("%s --help: status %d, stdout %.60q, stderr %q", sub, status, out, errOut)
		}
		if s2, out2, _ := runCmd(t, "help", sub); s2 != 0 || out2 != out {
			t.Errorf("help %s: status %d, differs from --help", sub, s2)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"inspect", "--modle", "m.gguf", "x.dat"}, []string{"imatrix inspect: unknown flag --modle; did you mean --model?", "usage: imatrix inspect FILE", "Run 'imatrix inspect --help' for every flag."}},
		{[]string{"inspect"}, []string{"imatrix inspect: want one FILE, got 0 argument(s)"}},
		{[]string{"check", "x.dat"}, []string{"imatrix check: --model MODEL.gguf is required"}},
		{[]string{"merge", "a.dat"}, []string{"imatrix merge: -o OUT is required"}},
		{[]string{"convert", "--chunk-size", "0", "a", "b"}, []string{"imatrix convert: --chunk-size 0: must be positive"}},
		{[]string{"convert", "--chunk-size", "x", "a", "b"}, []string{`imatrix convert: --chunk-size "x": not a whole number`}},
		{[]string{"stats", "--svgg", "o.svg", "x"}, []string{"did you mean --svg?"}},
		{[]string{"inpsect", "x"}, []string{`imatrix: unknown command "inpsect"; did you mean inspect?`}},
	} {
		status, out, errOut := runCmd(t, tc.args...)
		if status != 2 || out != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q", tc.args, status, out, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%q: stderr lacks %q:\n%s", tc.args, w, errOut)
			}
		}
	}
}

// Every subcommand's help ends with two or three examples that use only
// flags the subcommand has.
func TestHelpExamples(t *testing.T) {
	for _, p := range commands.CheckExamples() {
		t.Error(p)
	}
}

// Every example of every subcommand's help parses with its flag set and
// arguments, as gquant's do (TestHelpExamplesParse there): run in an empty
// folder, each gets as far as its files (exit 1), never a usage error.
// Absolute paths are taken into the folder.
func TestHelpExamplesParse(t *testing.T) {
	t.Chdir(t.TempDir())
	runs := commands.ExampleRuns()
	if len(runs) == 0 {
		t.Fatal("no example lines")
	}
	for _, ex := range runs {
		args := slices.Clone(ex.Args)
		for i, a := range args {
			if filepath.IsAbs(a) {
				args[i] = filepath.Base(a)
			}
		}
		if code, _, stderr := runCmd(t, args...); code == 2 {
			t.Errorf("%s --help: example %q is a usage error:\n%s", ex.Help, ex.Line, stderr)
		}
	}
}
