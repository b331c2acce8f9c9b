package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// errNoSpace is the error of shortWriter once full.
var errNoSpace = errors.New("no space left on device")

// shortWriter takes room bytes, then fails every write, as a full disk does.
type shortWriter struct {
	buf  bytes.Buffer
	room int
}

func (w *shortWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.room {
		n, _ := w.buf.Write(p[:w.room-w.buf.Len()])
		return n, errNoSpace
	}
	return w.buf.Write(p)
}

// Every command that prints text on stdout fails (exit status other than
// 0, the error on stderr) when that text cannot all be written: a manifest
// or a report cut short must not pass for a whole one. Each command line is
// tried with room for none of its output, for part of it, and on /dev/full.
func TestTextOutputWriteError(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	for _, args := range [][]string{
		{"hash", in},
		{"hash", "--all", in},
		{"inspect", in},
		{"split", "--dry-run", "--split-max-tensors", "20", in, filepath.Join(dir, "dry")},
		{"split", "--force", "--split-max-tensors", "20", in, filepath.Join(dir, "s")},
		{"repack", "--dry-run", in, filepath.Join(dir, "r.gguf")},
	} {
		code, whole, errOut := runStreams(args...)
		if code != 0 || len(whole) < 100 {
			t.Fatalf("%q: exit %d, %d bytes out\n%s", args, code, len(whole), errOut)
		}
		for _, room := range []int{0, 50, len(whole) - 1} {
			out := &shortWriter{room: room}
			var errb bytes.Buffer
			if code := run(args, out, &errb); code == 0 || !strings.Contains(errb.String(), errNoSpace.Error()) {
				t.Errorf("%q, room for %d of %d bytes: exit %d, stderr %q", args, room, len(whole), code, errb.String())
			}
		}
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			continue
		}
		var errb bytes.Buffer
		if code := run(args, full, &errb); code == 0 || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%q > /dev/full: exit %d, stderr %q", args, code, errb.String())
		}
		full.Close()
	}
}
