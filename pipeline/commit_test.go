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
