package splitter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/internal/modelgen"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// listDir returns the names in dir, hidden temporary files included.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestMergeBadShardSets: every broken shard set is refused before anything
// is written, with an error naming the files involved.
func TestMergeBadShardSets(t *testing.T) {
	ds2 := func(i int) string {
		return golden.Path(t, "e2e", "split", gguf.ShardPath("tiny-ds2-bf16", i, 2))
	}
	// A second model's 2-shard set, to mix with the golden one.
	other := t.TempDir()
	llama := filepath.Join(other, "llama.gguf")
	if err := modelgen.WriteFile(llama, modelgen.TinyLlama.Model(), modelgen.WriteOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(llama)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Split(m, filepath.Join(other, "llama"), Limits{MaxTensors: (len(m.Tensors) + 1) / 2}, nil); err != nil {
		t.Fatal(err)
	}
	m.Close()

	for _, tc := range []struct {
		name   string
		files  map[string]string // name in the test folder -> source
		merge  string
		inErr  []string
		target error
	}{
		{
			name:   "missing shard",
			files:  map[string]string{"m-00001-of-00002.gguf": ds2(0)},
			merge:  "m-00001-of-00002.gguf",
			inErr:  []string{"m-00002-of-00002.gguf", "missing"},
			target: gguf.ErrShard,
		},
		{
			name:   "two models",
			files:  map[string]string{"m-00001-of-00002.gguf": ds2(0), "m-00002-of-00002.gguf": filepath.Join(other, "llama-00002-of-00002.gguf")},
			merge:  "m-00001-of-00002.gguf",
			inErr:  []string{"m-00001-of-00002.gguf", "m-00002-of-00002.gguf", "different models"},
			target: gguf.ErrShard,
		},
		{
			name:   "shard listed twice",
			files:  map[string]string{"m-00001-of-00002.gguf": ds2(0), "m-00002-of-00002.gguf": ds2(0)},
			merge:  "m-00002-of-00002.gguf",
			inErr:  []string{"m-00002-of-00002.gguf", "listed twice"},
			target: gguf.ErrShard,
		},
		{
			name:   "count differs from name",
			files:  map[string]string{"m-00001-of-00003.gguf": ds2(0)},
			merge:  "m-00001-of-00003.gguf",
			inErr:  []string{"m-00001-of-00003.gguf", "3 shards"},
			target: gguf.ErrShard,
		},
		{
			name:   "not split",
			files:  map[string]string{"m.gguf": golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")},
			merge:  "m.gguf",
			inErr:  []string{"m.gguf"},
			target: ErrNotSplit,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, src := range tc.files {
				copyFile(t, src, filepath.Join(dir, name))
			}
			out := filepath.Join(dir, "merged.gguf")
			err := Merge(filepath.Join(dir, tc.merge), out, nil)
			if !errors.Is(err, tc.target) {
				t.Fatalf("got %v, want %v", err, tc.target)
			}
			for _, s := range tc.inErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output written: %v", err)
			}
		})
	}
}

// TestNeverOverwrite: outputs that exist are refused unless Overwrite is
// set, and an input is refused even then.
func TestNeverOverwrite(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		name := gguf.ShardPath("m", i, 2)
		copyFile(t, golden.Path(t, "e2e", "split", gguf.ShardPath("tiny-ds2-bf16", i, 2)), filepath.Join(dir, name))
	}
	first := filepath.Join(dir, "m-00001-of-00002.gguf")
	second := filepath.Join(dir, "m-00002-of-00002.gguf")
	existing := filepath.Join(dir, "existing.gguf")
	if err := os.WriteFile(existing, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Merge(first, existing, nil); !errors.Is(err, ErrExists) {
		t.Errorf("merge onto an existing file: %v", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("existing file changed")
	}
	if err := Merge(first, second, &Options{Overwrite: true}); !errors.Is(err, gguf.ErrSameFile) {
		t.Errorf("merge onto a shard: %v", err)
	}
	in, err := gguf.Open(first)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	// Re-splitting a set onto its own names would overwrite the input.
	if _, err := Split(in, filepath.Join(dir, "m.gguf"), Limits{MaxTensors: 40}, &Options{Overwrite: true}); !errors.Is(err, gguf.ErrSameFile) {
		t.Errorf("split onto the input: %v", err)
	}
	// Re-splitting a set under another prefix works and gives the
	// reference's shards.
	if _, err := Split(in, filepath.Join(dir, "again"), Limits{MaxTensors: 40}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		sameBytes(t, filepath.Join(dir, gguf.ShardPath("again", i, 2)), golden.Path(t, "e2e", "split", gguf.ShardPath("tiny-ds2-bf16", i, 2)))
	}
	if len(listDir(t, dir)) != 5 {
		t.Errorf("folder holds %q", listDir(t, dir))
	}
}

// TestSplitFailureLeavesNothing: a failure while writing the second shard
// removes the first one too, and no temporary file stays behind.
func TestSplitFailureLeavesNothing(t *testing.T) {
	in, err := gguf.Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	in.Close() // every tensor copy now fails
	dir := t.TempDir()
	_, err = Split(in, filepath.Join(dir, "out"), Limits{MaxTensors: 40, MetadataOnlyFirst: true}, nil)
	if err == nil || !strings.Contains(err.Error(), "shard 2 of 3") {
		t.Fatalf("got %v, want a failure in shard 2", err)
	}
	if names := listDir(t, dir); len(names) != 0 {
		t.Errorf("left behind: %q", names)
	}
}
