package gguf

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

// sameTensors checks that two models hold the same tensors in the same
// order with the same bytes.
func sameTensors(t *testing.T, got, want *Model) {
	t.Helper()
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("%d tensors, want %d", len(got.Tensors), len(want.Tensors))
	}
	for i, g := range got.Tensors {
		w := want.Tensors[i]
		if g.Name != w.Name || g.Type != w.Type || g.Size != w.Size || !equalShape(g.Shape, w.Shape) {
			t.Fatalf("tensor %d: %s %s %v (%d bytes), want %s %s %v (%d bytes)", i, g.Name, g.Type, g.Shape, g.Size, w.Name, w.Type, w.Shape, w.Size)
		}
		gb, err := io.ReadAll(got.TensorReader(i))
		if err != nil {
			t.Fatal(err)
		}
		wb, err := io.ReadAll(want.TensorReader(i))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gb, wb) {
			t.Fatalf("tensor %s: data differs", g.Name)
		}
	}
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOpenShardSets(t *testing.T) {
	tests := []struct {
		whole  string
		shards []string
	}{
		{"tiny-ds2-bf16.gguf", []string{"tiny-ds2-bf16-00001-of-00002.gguf", "tiny-ds2-bf16-00002-of-00002.gguf"}},
		{"out-recipe.gguf", []string{"out-recipe-00001-of-00003.gguf", "out-recipe-00002-of-00003.gguf", "out-recipe-00003-of-00003.gguf"}},
	}
	for _, tt := range tests {
		t.Run(tt.whole, func(t *testing.T) {
			whole, err := Open(golden.Path(t, "e2e", tt.whole))
			if err != nil {
				t.Fatal(err)
			}
			defer whole.Close()
			if len(whole.Shards) != 1 || len(whole.Tensors) != 74 {
				t.Fatalf("%d shards, %d tensors", len(whole.Shards), len(whole.Tensors))
			}
			// Any shard opens the whole set.
			for k, name := range tt.shards {
				m, err := Open(golden.Path(t, "e2e", "split", name))
				if err != nil {
					t.Fatal(err)
				}
				if len(m.Shards) != len(tt.shards) {
					t.Errorf("opened from shard %d: %d shards", k+1, len(m.Shards))
				}
				for i, s := range m.Shards {
					if filepath.Base(s.Path) != tt.shards[i] {
						t.Errorf("shard %d is %s", i, s.Path)
					}
				}
				if arch, _ := m.Metadata.Text("general.architecture"); arch != "deepseek2" {
					t.Errorf("metadata is not shard 1's: architecture %q", arch)
				}
				sameTensors(t, m, whole)
				last := m.Tensors[len(m.Tensors)-1]
				if last.Shard != len(tt.shards)-1 || m.TensorIndex(last.Name) != len(m.Tensors)-1 {
					t.Errorf("last tensor %s in shard %d", last.Name, last.Shard)
				}
				m.Close()
			}
		})
	}
}

// copyShards copies golden shards into a temporary directory under new
// names (src -> dst), so tests can break the set.
func copyShards(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for dst, src := range files {
		b := golden.ReadFile(t, "e2e", "split", src)
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpenBrokenShardSets(t *testing.T) {
	const s1, s2 = "tiny-ds2-bf16-00001-of-00002.gguf", "tiny-ds2-bf16-00002-of-00002.gguf"
	tests := []struct {
		name  string
		files map[string]string // name in the set -> golden file
		open  string
		link  [2]string // optional symlink: link[0] -> link[1]
		want  string    // in the error message
	}{
		{name: "missing second", files: map[string]string{s1: s1}, open: s1, want: "shard 2 of 2 is missing"},
		{name: "missing first", files: map[string]string{s2: s2}, open: s2, want: "shard 1 of 2 is missing"},
		{name: "shard 1 twice", files: map[string]string{s1: s1, s2: s1}, open: s1, want: "split.no 0"},
		{name: "symlinked twice", files: map[string]string{s1: s1}, link: [2]string{s2, s1}, open: s1, want: "same file"},
		{name: "other model", files: map[string]string{s1: s1, s2: "out-recipe-00002-of-00003.gguf"}, open: s1, want: "split.count 3"},
		{name: "renamed set", files: map[string]string{"m-00001-of-00003.gguf": s1, "m-00002-of-00003.gguf": s2}, open: "m-00001-of-00003.gguf", want: "the name says 3 shards"},
		{name: "not a shard name", files: map[string]string{"model.gguf": s1}, open: "model.gguf", want: "does not follow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyShards(t, tt.files)
			if tt.link[0] != "" {
				if err := os.Symlink(tt.link[1], filepath.Join(dir, tt.link[0])); err != nil {
					t.Skip(err)
				}
			}
			path := filepath.Join(dir, tt.open)
			m, err := Open(path)
			if err == nil {
				m.Close()
				t.Fatal("opened a broken shard set")
			}
			if !errors.Is(err, ErrShard) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("error %q, want ErrShard mentioning %q and the file", err, tt.want)
			}
			t.Log(err)
		})
	}
}

func TestOpenErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00"), 0o644)
	_, err := Open(bad)
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), bad) {
		t.Errorf("truncated file: %v", err)
	}
	_, err = Open(filepath.Join(dir, "none.gguf"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "none.gguf") {
		t.Errorf("missing file: %v", err)
	}
	_, err = Open(dir)
	if !errors.Is(err, ErrNotGGUF) {
		t.Errorf("directory: %v", err)
	}
}

// ParseShardPath reads the names ShardPath writes and refuses counts past
// split.count's 65535 (verify listed 10^13 paths from such a name and ran
// out of memory).
func TestParseShardPath(t *testing.T) {
	for _, tc := range []struct {
		path   string
		prefix string
		i, n   int
		ok     bool
	}{
		{ShardPath("dir/m", 0, 3), "dir/m", 0, 3, true},
		{ShardPath("m", 65534, 65535), "m", 65534, 65535, true},
		{"m-00001-of-65536.gguf", "", 0, 0, false},
		{"m-00001-of-9999999999999.gguf", "", 0, 0, false},
		{"m-00004-of-00003.gguf", "", 0, 0, false},
		{"m-00000-of-00003.gguf", "", 0, 0, false},
		{"m-0001-of-0003.gguf", "", 0, 0, false},
		{"m.gguf", "", 0, 0, false},
	} {
		prefix, i, n, ok := ParseShardPath(tc.path)
		if prefix != tc.prefix || i != tc.i || n != tc.n || ok != tc.ok {
			t.Errorf("ParseShardPath(%q) = %q, %d, %d, %v", tc.path, prefix, i, n, ok)
		}
	}
}
