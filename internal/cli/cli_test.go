package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
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

// failingWriter takes room bytes, then fails every write.
type failingWriter struct {
	buf  bytes.Buffer
	room int
}

var errFull = errors.New("no space left on device")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.room {
		n, _ := w.buf.Write(p[:w.room-w.buf.Len()])
		return n, errFull
	}
	return w.buf.Write(p)
}

// A command that ignores the errors of its text output (fmt.Fprintf) and
// returns 0 exits 1 when part of that output was not written, with the
// error on stderr; nothing is written after the failure, and a command
// that failed keeps its own status and message.
func TestRunOutputError(t *testing.T) {
	var s Set
	s.Program = "prog"
	status := 0
	s.Register(&Command{Name: "list", Run: func(args []string, stdout, stderr io.Writer) int {
		for i := range 10 {
			fmt.Fprintf(stdout, "line %d\n", i)
		}
		return status
	}})
	for _, tc := range []struct {
		room, status, want int
		errOut             string
	}{
		{1000, 0, 0, ""},
		{20, 0, 1, "prog list: writing the standard output: no space left on device\n"},
		{20, 3, 3, ""}, // the command's own failure
	} {
		status = tc.status
		out := &failingWriter{room: tc.room}
		var errOut bytes.Buffer
		if got := s.Run([]string{"list"}, out, &errOut); got != tc.want || errOut.String() != tc.errOut {
			t.Errorf("room %d, status %d: exit %d, stderr %q; want %d, %q", tc.room, tc.status, got, errOut.String(), tc.want, tc.errOut)
		}
		if tc.room < 1000 && out.buf.String() != "line 0\nline 1\nline 2" {
			t.Errorf("room %d: wrote %q: lines after the failure, or not up to it", tc.room, out.buf.String())
		}
	}
	if full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil {
		defer full.Close()
		status = 0
		var errOut bytes.Buffer
		if got := s.Run([]string{"list"}, full, &errOut); got != 1 || !strings.Contains(errOut.String(), "writing the standard output") {
			t.Errorf("/dev/full: exit %d, stderr %q", got, errOut.String())
		}
	}
}
