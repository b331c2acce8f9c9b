package splitter

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// A re-split with Overwrite whose last rename fails keeps the shards it has
// put in place (they replaced the user's old ones, so removing them would
// lose both) and the failed shard's new file, says which is which, and
// leaves no sidecar describing a replaced shard.
func TestSplitCommitFailureKeepsShards(t *testing.T) {
	in, err := gguf.Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dir := t.TempDir()
	prefix := filepath.Join(dir, "m")
	limits := Limits{MaxTensors: 20}
	plan, err := Split(in, prefix, limits, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := plan.Paths(prefix)
	if len(paths) < 3 {
		t.Fatalf("%d shards, want 3 or more", len(paths))
	}
	for _, p := range paths {
		os.WriteFile(p+".side", []byte("describes the old shard"), 0o644)
	}
	// The last shard's name is now a directory that is not empty: its
	// rename fails after the others are done.
	last := paths[len(paths)-1]
	os.Remove(last)
	if err := os.MkdirAll(filepath.Join(last, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts := &Options{Overwrite: true, Beside: func(p string) []string { return []string{p + ".side"} }}
	_, err = Split(in, prefix, limits, opts)
	var ce *gguf.CommitError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *gguf.CommitError", err)
	}
	t.Log(err)
	if !slices.Equal(ce.Placed, paths[:len(paths)-1]) || ce.Failed != last {
		t.Errorf("error says placed %q, failed %q", ce.Placed, ce.Failed)
	}
	for _, p := range ce.Placed {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a shard put in place is gone: %v", err)
		}
		if _, err := os.Stat(p + ".side"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s.side still describes the replaced shard", p)
		}
	}
	for _, k := range ce.Kept {
		if _, err := os.Stat(k.Temp); err != nil || !strings.Contains(ce.Error(), k.Temp) {
			t.Errorf("kept file %s: %v", k.Temp, err)
		}
	}
}

// logFunc is an io.Writer that calls its function for each line logged.
type logFunc func()

func (f logFunc) Write(p []byte) (int, error) { f(); return len(p), nil }

// Without Overwrite, a file that appears at an output's name while Merge
// writes (after the check at the start) is not replaced: the merge fails
// with os.ErrExist naming it and keeps the complete merged file.
func TestMergeNeverReplacesFileCreatedDuringRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	first := golden.Path(t, "e2e", "split", gguf.ShardPath("tiny-ds2-bf16", 0, 2))
	appear := logFunc(func() { os.WriteFile(out, []byte("user data"), 0o644) })
	err := Merge(first, out, &Options{Log: appear})
	var ce *gguf.CommitError
	if !errors.Is(err, os.ErrExist) || !errors.As(err, &ce) || !strings.Contains(err.Error(), out) {
		t.Fatalf("got %v, want os.ErrExist naming %s", err, out)
	}
	if b, _ := os.ReadFile(out); string(b) != "user data" {
		t.Errorf("the user's file was replaced")
	}
	sameBytes(t, ce.Kept[0].Temp, golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))

	// With Overwrite it is replaced, as asked.
	os.Remove(ce.Kept[0].Temp)
	if err := Merge(first, out, &Options{Overwrite: true, Log: appear}); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, out, golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
}

// Options.Prepare sees every output complete under its temporary name
// before any rename, and placed(i) runs when output i is in place and the
// next is not yet: a kill between two renames leaves no placed file
// without what placed writes (gquant's sidecar). An error from Prepare
// renames nothing.
func TestSplitPrepareRunsBeforeEachNextRename(t *testing.T) {
	in, err := gguf.Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	prefix := filepath.Join(t.TempDir(), "m")
	var order []int
	prepare := func(staged, final []string) (func(int) error, error) {
		for i := range staged {
			if _, err := os.Stat(staged[i]); err != nil {
				t.Errorf("staged %d: %v", i, err)
			}
			if _, err := os.Stat(final[i]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("final %d exists before the renames: %v", i, err)
			}
		}
		return func(i int) error {
			order = append(order, i)
			if _, err := os.Stat(final[i]); err != nil {
				t.Errorf("placed(%d) before its rename: %v", i, err)
			}
			if i+1 < len(final) {
				if _, err := os.Stat(final[i+1]); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("placed(%d) after the next rename", i)
				}
			}
			return nil
		}, nil
	}
	plan, err := Split(in, prefix, Limits{MaxTensors: 20}, &Options{Prepare: prepare})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3}[:len(plan.Shards)]; !slices.Equal(order, want) {
		t.Errorf("placed %v, want %v", order, want)
	}

	prefix2 := filepath.Join(t.TempDir(), "m")
	fail := func(staged, final []string) (func(int) error, error) { return nil, errors.New("no sidecars") }
	if _, err := Split(in, prefix2, Limits{MaxTensors: 20}, &Options{Prepare: fail}); err == nil || !strings.Contains(err.Error(), "no sidecars") {
		t.Errorf("a failing Prepare: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(prefix2), "*")); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}
