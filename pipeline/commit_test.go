package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// copyOutputs opens a small bf16 model and plans outputs that each copy
// its tensor, one per name.
func copyOutputs(t *testing.T, dir string, names ...string) (*gguf.Model, []Output) {
	t.Helper()
	in := filepath.Join(dir, "in.gguf")
	writeBF16Model(t, in, 256, 8, -1, 0)
	m, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	var outs []Output
	for _, name := range names {
		outs = append(outs, Output{Path: filepath.Join(dir, name), Tensors: []Tensor{{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 8}, Type: formats.BF16}}})
	}
	return m, outs
}

// Outputs that replace the user's files (they existed at the start: --force)
// and whose last rename fails stay where they are put, with their sidecars;
// the old sidecars of replaced files are gone; the last output's complete
// file is kept and the error says which is which.
func TestRunCommitFailureKeepsOutputs(t *testing.T) {
	dir := t.TempDir()
	m, outs := copyOutputs(t, dir, "a-00001-of-00002.gguf", "a-00002-of-00002.gguf")
	a, b := outs[0].Path, outs[1].Path
	os.WriteFile(a, []byte("old"), 0o644)
	os.WriteFile(SidecarPath(a), []byte("{}"), 0o644)
	if err := os.MkdirAll(filepath.Join(b, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), m, outs, Options{Threads: 2})
	var ce *gguf.CommitError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *gguf.CommitError", err)
	}
	t.Log(err)
	if !slices.Equal(ce.Placed, []string{a}) || ce.Failed != b || len(ce.Kept) != 1 {
		t.Fatalf("error says placed %q, failed %q, kept %+v", ce.Placed, ce.Failed, ce.Kept)
	}
	if sc, err := ReadSidecar(a); err != nil || sc.File != filepath.Base(a) {
		t.Errorf("sidecar of the output in place: %+v, %v", sc, err)
	}
	for _, p := range []string{a, ce.Kept[0].Temp} {
		if m, err := gguf.Open(p); err != nil {
			t.Errorf("%s: %v", p, err)
		} else {
			m.Close()
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".progress") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

// An output that did not exist when the run started and appears while it
// works (another program, another run) is never replaced: the run fails
// with os.ErrExist naming it, and keeps the complete output.
func TestRunNeverReplacesFileCreatedDuringRun(t *testing.T) {
	dir := t.TempDir()
	m, outs := copyOutputs(t, dir, "out.gguf")
	out := outs[0].Path
	appear := func(Event) { os.WriteFile(out, []byte("user data"), 0o644) }
	err := Run(context.Background(), m, outs, Options{Threads: 2, Progress: appear})
	var ce *gguf.CommitError
	if !errors.Is(err, os.ErrExist) || !errors.As(err, &ce) || !strings.Contains(err.Error(), out) {
		t.Fatalf("got %v, want os.ErrExist naming %s", err, out)
	}
	if b, _ := os.ReadFile(out); string(b) != "user data" {
		t.Errorf("the user's file was replaced")
	}
	if _, err := os.Stat(SidecarPath(out)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a sidecar describes the user's file: %v", err)
	}
	if _, err := os.Stat(ce.Kept[0].Temp); err != nil {
		t.Errorf("the complete output: %v", err)
	}

	// An output that exists at the start (the caller allowed it) is
	// replaced.
	if err := Run(context.Background(), m, outs, Options{Threads: 2}); err != nil {
		t.Fatal(err)
	}
	if m, err := gguf.Open(out); err != nil {
		t.Error(err)
	} else {
		m.Close()
	}
}
