package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func testFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("cmd", pflag.ContinueOnError)
	fs.String("imatrix", "", "importance matrix `FILE`")
	fs.StringArray("custom-q", nil, "rules")
	fs.Int("split-max-tensors", 0, "most tensors per shard")
	fs.Float64("ratio", 1, "a ratio")
	fs.Bool("dry-run", false, "write nothing")
	fs.StringP("output", "o", "", "output")
	fs.Bool("secret", false, "hidden")
	_ = fs.MarkHidden("secret")
	Unsupported(fs, "prune-layers", true, "mainline's layer pruning is not supported")
	Unsupported(fs, "no-op-thing", false, "not here")
	Ignored(fs, "split", "what this command always does")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: prog cmd [flags] IN OUT")
		fmt.Fprintln(fs.Output(), "  second usage line")
		fmt.Fprintln(fs.Output(), "\nflags:")
		fs.PrintDefaults()
	}
	return fs
}

// Every parse error is one message on stderr with the closest flag, the
// usage lines and the pointer to --help, exit 2; --help is the whole usage
// on stdout, exit 0.
func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		done   bool
		want   string // in stderr (or stdout for help)
	}{
		{[]string{"a", "b"}, 0, false, ""},
		{[]string{"--help"}, 0, true, "flags:"},
		{[]string{"-h"}, 0, true, "--dry-run"},
		{[]string{"--imatirx", "x", "a", "b"}, 2, true, "unknown flag --imatirx; did you mean --imatrix?"},
		{[]string{"--imat", "x"}, 2, true, "did you mean --imatrix?"},
		{[]string{"--dryrun"}, 2, true, "did you mean --dry-run?"},
		{[]string{"--custom-qq=a=b"}, 2, true, "did you mean --custom-q?"},
		{[]string{"--zzzzzzzz"}, 2, true, "unknown flag --zzzzzzzz\n"},
		{[]string{"--secre"}, 2, true, "unknown flag --secre\n"}, // hidden flags are not offered
		{[]string{"--split-max-tensors", "abc"}, 2, true, `--split-max-tensors "abc": not a whole number`},
		{[]string{"--split-max-tensors", "99999999999999999999"}, 2, true, "out of range"},
		{[]string{"--ratio", "x"}, 2, true, `--ratio "x": not a number`},
		{[]string{"--dry-run=maybe"}, 2, true, "not true or false"},
		{[]string{"a", "--imatrix"}, 2, true, "--imatrix needs a value (importance matrix FILE)"},
		{[]string{"in", "out", "Q4_K_M", "-1"}, 2, true, "-1: a negative number is not an argument here"},
		{[]string{"-x"}, 2, true, "unknown flag -x"},
		{[]string{"-imatrix", "f"}, 2, true, "unknown flag -i in -imatrix; did you mean --imatrix? (long flags take two dashes)"},
		{[]string{"--prune-layers", "1,2"}, 2, true, "--prune-layers: mainline's layer pruning is not supported"},
		{[]string{"--no-op-thing"}, 2, true, "--no-op-thing: not here"},
		{[]string{"--split", "a", "b"}, 0, false, ""},
	} {
		fs := testFlags()
		var out, errb bytes.Buffer
		status, done := ParseFlags("prog cmd", fs, tc.args, &out, &errb)
		if status != tc.status || done != tc.done {
			t.Errorf("%q: status %d done %v, want %d %v", tc.args, status, done, tc.status, tc.done)
		}
		got, other := errb.String(), out.String()
		if tc.status == 0 {
			got, other = other, got
		}
		if !strings.Contains(got, tc.want) || other != "" {
			t.Errorf("%q: got %q (other stream %q), want %q in it", tc.args, got, other, tc.want)
		}
		if tc.status == 2 {
			want := "usage: prog cmd [flags] IN OUT\n  second usage line\nRun 'prog cmd --help' for every flag.\n"
			if !strings.HasSuffix(got, want) || strings.Count(got, "\n") != 4 {
				t.Errorf("%q: stderr %q does not end in the usage lines and hint", tc.args, got)
			}
		}
		// After parsing, Usage writes to stderr (for later usage errors).
		if fs.Output() != &errb {
			t.Errorf("%q: output left at %v", tc.args, fs.Output())
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"imatirx", "imatrix", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"abc", "abc", 0},
	} {
		if d := editDistance(tc.a, tc.b); d != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.d)
		}
	}
}
