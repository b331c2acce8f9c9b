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
		args []string
		code int
		out  string
	}{
		{nil, 2, "usage: prog"}, {[]string{"help"}, 0, "say hello"}, {[]string{"hello", "x"}, 0, "hello x"},
		{[]string{"nope"}, 2, ""},
	} {
		var out, errb bytes.Buffer
		if code := s.Run(tc.args, &out, &errb); code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("%v: exit %d, %q", tc.args, code, out.String())
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a duplicate name was accepted")
		}
	}()
	s.Register(&Command{Name: "hello"})
}
