package gguf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

// copyShardSet copies the golden two-shard set into a new directory and
// returns the paths of the copies.
func copyShardSet(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i := range 2 {
		name := ShardPath("tiny-ds2-bf16", i, 2)
		b, err := os.ReadFile(golden.Path(t, "e2e", "split", name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// A shard that cannot be opened for want of permission is reported as
// that (fs.ErrPermission), not as a file that is not GGUF.
func TestOpenPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root opens files whatever their permissions")
	}
	paths := copyShardSet(t)
	if err := os.Chmod(paths[1], 0); err != nil {
		t.Fatal(err)
	}
	_, err := Open(paths[0])
	if !errors.Is(err, fs.ErrPermission) || errors.Is(err, ErrNotGGUF) {
		t.Errorf("got %v, want fs.ErrPermission and not ErrNotGGUF", err)
	}
}
