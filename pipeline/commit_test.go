package pipeline

import (
	"bytes"
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
	// The kept file keeps its progress record, so that --resume puts it in
	// place without the work: the obstacle gone, a resumed run finds every
	// tensor done and commits the kept bytes.
	kept, err := os.ReadFile(ce.Kept[0].Temp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ce.Kept[0].Temp + ".progress"); err != nil {
		t.Fatalf("the kept file's progress record: %v", err)
	}
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	outs[0].Skip = true // in place, as Config.Resume keeps it
	res, err := FindResumable(context.Background(), m, outs, func(s string) { t.Log(s) })
	if err != nil || res[1] == nil || res[1].Done != len(outs[1].Tensors) {
		t.Fatalf("FindResumable: %v, %+v", err, res)
	}
	if err := Run(context.Background(), m, outs, Options{Threads: 2, Resume: res}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(b); err != nil || !bytes.Equal(got, kept) {
		t.Errorf("%s after the resumed run: %v (same bytes as kept: %v)", b, err, bytes.Equal(got, kept))
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
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

// A run's sidecar goes only beside the file it put in place: when another
// process has put its own file there since (a stalled run, then a second
// run with --force), sidecarFor writes nothing.
func TestSidecarOnlyForOwnFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	if err := os.WriteFile(out, []byte("this run's"), 0o644); err != nil {
		t.Fatal(err)
	}
	own, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	sc := &Sidecar{Schema: SidecarSchema, File: "o.gguf"}
	if written, err := sidecarFor(out, own, sc); !written || err != nil {
		t.Fatalf("own file: written %v, %v", written, err)
	}
	os.Remove(SidecarPath(out))
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("another run's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, out); err != nil {
		t.Fatal(err)
	}
	if written, err := sidecarFor(out, own, sc); written || err != nil {
		t.Errorf("another process's file: written %v, %v", written, err)
	}
	if _, err := os.Stat(SidecarPath(out)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a sidecar beside another process's file: %v", err)
	}
}
