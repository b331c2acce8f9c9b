package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var s Set
	s.Program = "prog"
	s.Register(&Command{Name: "hello", Summary: "say hello", Run: func(args []string, stdout, stderr io.Writer) int {
		io.WriteString(stdout, "hello "+strings.Join(args, " "))
		return 0
	}})
	for _, tc := range []struct {
		args        []string
		code        int
		out, errOut string
	}{
		{nil, 2, "", "usage: prog"},
		{[]string{"help"}, 0, "say hello", ""},
		{[]string{"--help"}, 0, "say hello", ""},
		{[]string{"hello", "x"}, 0, "hello x", ""},
		{[]string{"help", "hello"}, 0, "hello --help", ""}, // help CMD is CMD --help
		{[]string{"nope"}, 2, "", `unknown command "nope"`},
		{[]string{"helo"}, 2, "", "did you mean hello?"},
		{[]string{"help", "helo"}, 2, "", "did you mean hello?"},
	} {
		var out, errb bytes.Buffer
		code := s.Run(tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.errOut) ||
			tc.out == "" && out.Len() > 0 || tc.errOut == "" && errb.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out.String(), errb.String())
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a duplicate name was accepted")
		}
	}()
	s.Register(&Command{Name: "hello"})
}
