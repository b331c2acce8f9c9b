package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// runGquant runs the command line and returns its exit status and output.
func runGquant(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func sameFileBytes(t *testing.T, got, want string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s (%d bytes) differs from %s (%d bytes)", got, len(g), want, len(w))
	}
}

// TestSplitMergeCommands runs the llama-gguf-split commands of
// golden/e2e/COMMANDS.md through gquant split, compares the shards with the
// reference's byte for byte, then merges them back into the original file.
func TestSplitMergeCommands(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  []string
		in     string // relative to golden/e2e
		prefix string // reference shards, relative to golden/e2e
		shards int
	}{
		{"max-tensors", []string{"--split-max-tensors", "40"}, "tiny-ds2-bf16.gguf", "split/tiny-ds2-bf16", 2},
		{"max-size", []string{"--split-max-size", "2M"}, "out-recipe.gguf", "split/out-recipe", 3},
		{"underscores", []string{"--split_max_tensors", "40"}, "tiny-ds2-bf16.gguf", "split/tiny-ds2-bf16", 2}, // as llama-gguf-split reads them
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := golden.Path(t, "e2e", tc.in)
			prefix := filepath.Join(dir, "sub", "out.gguf") // the folder is made, .gguf dropped
			args := append(append([]string{"split"}, tc.flags...), in, prefix)
			code, stdout, stderr := runGquant(args...)
			if code != 0 {
				t.Fatalf("split: exit %d\n%s%s", code, stdout, stderr)
			}
			base := filepath.Join(dir, "sub", "out")
			for i := range tc.shards {
				sameFileBytes(t, gguf.ShardPath(base, i, tc.shards), gguf.ShardPath(golden.Path(t, "e2e", tc.prefix), i, tc.shards))
			}
			merged := filepath.Join(dir, "merged.gguf")
			// Any shard finds the others.
			code, stdout, stderr = runGquant("merge", gguf.ShardPath(base, tc.shards-1, tc.shards), merged)
			if code != 0 {
				t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
			}
			sameFileBytes(t, merged, in)
		})
	}
}

func TestSplitDryRun(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runGquant("split", "--dry-run", "--split-max-size", "2M", golden.Path(t, "e2e", "out-recipe.gguf"), filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"3 shards, 74 tensors", "out-00001-of-00003.gguf     29 tensors", "out-00003-of-00003.gguf     16 tensors"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	// The planned sizes are the reference's file sizes.
	for i := range 3 {
		st, err := os.Stat(gguf.ShardPath(golden.Path(t, "e2e", "split", "out-recipe"), i, 3))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout, " "+strconv.FormatInt(st.Size(), 10)+" bytes") {
			t.Errorf("shard %d: size %d not in the plan:\n%s", i+1, st.Size(), stdout)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dry run wrote %d files", len(entries))
	}
}

// merge --dry-run shows the set and the output's size and writes nothing
// (llama-gguf-split ignores the option and merges).
func TestMergeDryRun(t *testing.T) {
	dir := t.TempDir()
	in := golden.Path(t, "e2e", "out-recipe.gguf")
	st, err := os.Stat(in)
	if err != nil {
		t.Fatal(err)
	}
	shard := gguf.ShardPath(golden.Path(t, "e2e", "split", "out-recipe"), 1, 3)
	out := filepath.Join(dir, "m.gguf")
	code, stdout, stderr := runGquant("merge", "--dry-run", shard, out)
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("would write %s: 74 tensors from 3 shards, %d bytes", out, st.Size())) {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dry run wrote %d files", len(entries))
	}
	code, stdout, _ = runGquant("merge", "--dry-run", "--json", shard, out)
	if code != 0 || !strings.Contains(stdout, `"written": false`) || !strings.Contains(stdout, fmt.Sprintf(`"bytes": %d`, st.Size())) {
		t.Errorf("--json: exit %d\n%s", code, stdout)
	}
	code, _, stderr = runGquant("merge", "--dry-run", shard, shard)
	if code != 1 || !strings.Contains(stderr, "the run would stop before any work") {
		t.Errorf("onto a shard: exit %d\n%s", code, stderr)
	}
}

func TestSplitMergeCommandErrors(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "m-00001-of-00002.gguf")
	b, err := os.ReadFile(golden.Path(t, "e2e", "split", "tiny-ds2-bf16-00001-of-00002.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shard, b, 0o644); err != nil {
		t.Fatal(err)
	}
	in := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string // in stderr
	}{
		{"no args", []string{"split"}, 2, "usage"},
		{"bad size", []string{"split", "--split-max-size", "2X", in, filepath.Join(dir, "o")}, 2, "unknown unit"},
		{"zero size", []string{"split", "--split-max-size", "0M", in, filepath.Join(dir, "o")}, 2, "less than one byte"},
		{"negative tensors", []string{"split", "--split-max-tensors", "-3", in, filepath.Join(dir, "o")}, 2, "positive"},
		{"missing input", []string{"split", filepath.Join(dir, "nope.gguf"), filepath.Join(dir, "o")}, 1, "nope.gguf"},
		{"oversized tensor", []string{"split", "--dry-run", "--split-max-size", "1M", in, filepath.Join(dir, "o")}, 0, "more than the 1000000-byte shard limit"},
		{"missing shard", []string{"merge", shard, filepath.Join(dir, "merged.gguf")}, 1, "m-00002-of-00002.gguf"},
		{"merge usage", []string{"merge", shard}, 2, "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runGquant(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, want %d; stderr lacks %q?\n%s%s", code, tc.code, tc.msg, stdout, stderr)
			}
		})
	}
}

// Split and merge carry a quantized file's sidecar to their outputs (each
// record at its new offset), so verify re-hashes the shards and a merge
// gives back the original sidecar; from an input without a sidecar the
// outputs get none, and stale ones beside them go.
func TestSplitMergeCarrySidecars(t *testing.T) {
	dir := t.TempDir()
	q := filepath.Join(dir, "q.gguf")
	mustGquant(t, "quantize", tinyModel, q, "Q8_0")
	prefix := filepath.Join(dir, "part")
	mustGquant(t, "split", "--split-max-tensors", "20", q, prefix)
	shards, _ := filepath.Glob(prefix + "-*-of-*.gguf")
	if len(shards) < 2 {
		t.Fatalf("shards %v", shards)
	}
	for _, s := range shards {
		if _, err := os.Stat(s + ".gquant.json"); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if out := mustGquant(t, "verify", shards[0]); !strings.Contains(out, "tensors' bytes re-hashed and as recorded") {
		t.Errorf("verify of the shards:\n%s", out)
	}
	m := filepath.Join(dir, "m.gguf")
	mustGquant(t, "merge", shards[0], m)
	want, _ := os.ReadFile(q + ".gquant.json")
	got, _ := os.ReadFile(m + ".gquant.json")
	if string(got) != strings.Replace(string(want), `"file": "q.gguf"`, `"file": "m.gguf"`, 1) {
		t.Errorf("merged sidecar differs from the original's:\n%s", got)
	}

	if err := os.Remove(q + ".gquant.json"); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runGquant("split", "--force", "--split-max-tensors", "20", q, prefix)
	if code != 0 || !strings.Contains(stderr, "an earlier run's sidecar") {
		t.Fatalf("split without a sidecar: status %d\n%s", code, stderr)
	}
	for _, s := range shards {
		if _, err := os.Stat(s + ".gquant.json"); !os.IsNotExist(err) {
			t.Errorf("%s: stale sidecar left (%v)", s, err)
		}
	}
}

// A PREFIX that names no file (empty, a directory with its separator, . or
// ..) is a usage error: the shards would get hidden names like
// -00001-of-00003.gguf.
func TestSplitPrefixNamesAFile(t *testing.T) {
	dir := t.TempDir()
	sep := string(filepath.Separator)
	for _, prefix := range []string{"", dir + sep, dir + sep + ".", dir + sep + "x" + sep + ".."} {
		code, _, stderr := runGquant("split", "--split-max-tensors", "20", tinyModel, prefix)
		if code != 2 || !strings.Contains(stderr, "names no file") {
			t.Errorf("PREFIX %q: status %d\n%s", prefix, code, stderr)
		}
	}
	if got, _ := os.ReadDir(dir); len(got) != 0 {
		t.Errorf("wrote %v", got)
	}
}

// split --dry-run runs the output checks without their effects: re-splitting
// a set onto its own prefix or over a read-only shard fails after the plan,
// as the run would; existing shards are mentioned.
func TestSplitDryRunChecksOutputs(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "s")
	mustGquant(t, "split", "--split-max-tensors", "20", tinyModel, prefix)
	first := prefix + "-00001-of-00003.gguf"
	failGquant(t, []string{"the run would stop before any work", "is the input"}, "split", "--dry-run", "--split-max-tensors", "20", first, prefix)
	failGquant(t, []string{"the run would stop before any work", "is the input"}, "split", "--dry-run", "--json", "--split-max-tensors", "20", first, prefix)
	code, _, stderr := runGquant("split", "--dry-run", "--split-max-tensors", "20", tinyModel, prefix)
	if code != 0 || !strings.Contains(stderr, first+" exists: the run replaces it only with --force") {
		t.Errorf("over existing shards: status %d\n%s", code, stderr)
	}
	if err := os.Chmod(prefix+"-00002-of-00003.gguf", 0o444); err != nil {
		t.Fatal(err)
	}
	failGquant(t, []string{"read-only"}, "split", "--dry-run", "--force", "--split-max-tensors", "20", tinyModel, prefix)
}
