package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// TestRepackCommand runs the reference's
// `llama-quantize --repack out-q4_k_m.gguf out-q4_k_m-repacked.gguf Q4_K_R4`
// as gquant repack and compares byte for byte, then undoes it.
func TestRepackCommand(t *testing.T) {
	dir := t.TempDir()
	in := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	out := filepath.Join(dir, "sub", "repacked.gguf")
	code, stdout, stderr := runGquant("repack", "--threads", "2", in, out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	sameFileBytes(t, out, golden.Path(t, "e2e", "out-q4_k_m-repacked.gguf"))
	if !strings.Contains(stdout, "general.file_type Q4_K_M -> Q4_K_R4") {
		t.Errorf("stdout:\n%s", stdout)
	}

	back := filepath.Join(dir, "back.gguf")
	code, stdout, stderr = runGquant("repack", "--undo", "--quiet", out, back)
	if code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	sameFileBytes(t, back, in)
}

func TestRepackCommandErrors(t *testing.T) {
	dir := t.TempDir()
	q4km := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	repacked := golden.Path(t, "e2e", "out-q4_k_m-repacked.gguf")
	out := filepath.Join(dir, "out.gguf")
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"already repacked", []string{repacked, out}, 1, "already repacked"},
		{"unmatched pattern", []string{"--pattern", "exps,nope", q4km, out}, 1, `"nope" matches none`},
		{"unrepackable pattern", []string{"--pattern", `_norm\.weight`, q4km, out}, 1, "repackable: q4_0->q4_0_r8"},
		{"output is input", []string{q4km, q4km}, 1, "output file is one of the inputs"},
		{"undo of a plain model", []string{"--undo", q4km, out}, 1, "no row-interleaved tensor"},
		{"missing argument", []string{q4km}, 2, "usage: gquant repack"},
		{"help", []string{"--help"}, 0, "Q4_K_R4 -> Q4_K_M"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runGquant(append([]string{"repack"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.says) {
				t.Errorf("exit %d (want %d), output does not say %q or does:\n%s%s", code, tc.code, tc.says, stdout, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

func TestRepackDryRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	code, stdout, stderr := runGquant("repack", "--dry-run", "--repack-pattern", `ffn_.*_exps`, golden.Path(t, "e2e", "out-q4_k_m.gguf"), out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"9 of 74 tensors converted", "blk.1.ffn_down_exps.weight", "not matched by the patterns", "token embeddings are never repacked", "would write " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run does not say %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the dry run wrote the output")
	}
}

// Repacking straight into shards gives what repacking to one file and then
// splitting it gives.
func TestRepackToShardsEqualsSplit(t *testing.T) {
	in := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	tmp := t.TempDir()
	one := filepath.Join(tmp, "one.gguf")
	for _, c := range [][]string{
		{"repack", "--quiet", in, one},
		{"repack", "--quiet", "--split-max-tensors", "30", in, filepath.Join(tmp, "direct")},
		{"split", "--split-max-tensors", "30", one, filepath.Join(tmp, "after")},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, stderr.String())
		}
	}
	for i := 0; i < 3; i++ {
		a, err := os.ReadFile(gguf.ShardPath(filepath.Join(tmp, "after"), i, 3))
		if err != nil {
			t.Fatal(err)
		}
		d, err := os.ReadFile(gguf.ShardPath(filepath.Join(tmp, "direct"), i, 3))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, d) {
			t.Errorf("shard %d differs", i+1)
		}
	}
}

// A repack that replaces an earlier quantize output (--force) removes that
// output's sidecar, which would describe another file.
func TestRepackDropsStaleSidecar(t *testing.T) {
	dir := t.TempDir()
	q := filepath.Join(dir, "q.gguf")
	out := filepath.Join(dir, "out.gguf")
	mustGquant(t, "quantize", tinyModel, q, "Q4_K_M")
	mustGquant(t, "quantize", tinyModel, out, "Q8_0")
	if _, err := os.Stat(out + ".gquant.json"); err != nil {
		t.Fatal(err)
	}
	mustGquant(t, "repack", "--force", q, out)
	if _, err := os.Stat(out + ".gquant.json"); !os.IsNotExist(err) {
		t.Fatalf("the Q8_0 run's sidecar is still beside the repacked file (%v)", err)
	}
}
