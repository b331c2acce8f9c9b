//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// --resume while another run writes the output (its temporary file
// locked): the run stops as busy before it says anything of the files or
// removes any, and the other run's file and record stay.
func TestResumeStopsWhenBusy(t *testing.T) {
	const model = "../../testdata/tiny-deepseek2-bf16.gguf"
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	// An id of no running process here: the writer runs elsewhere (another
	// machine, another PID namespace), and only its lock tells.
	live := filepath.Join(dir, fmt.Sprintf(".out.gguf.tmp-%d-abcdef", 1<<22+7))
	for _, p := range []string{live, live + ".progress"} {
		if err := os.WriteFile(p, []byte("GGUF"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runGquant("quantize", "--resume", model, out, "Q8_0", "1")
	if code != 1 || !strings.Contains(stderr, "is being written by process") || strings.Contains(stderr, "no interrupted write") {
		t.Errorf("status %d:\n%s%s", code, stdout, stderr)
	}
	for _, p := range []string{live, live + ".progress"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the other run's %s: %v", filepath.Base(p), err)
		}
	}
}
