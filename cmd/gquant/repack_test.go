package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/pipeline"
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

// onFirstLine is a stdout that calls do once, on repack's first tensor
// line: every output shard is then created and none complete, so what do
// changes at the final paths is met by the commit and by nothing before it.
type onFirstLine struct {
	once sync.Once
	do   func()
}

func (w *onFirstLine) Write(b []byte) (int, error) {
	w.once.Do(w.do)
	return len(b), nil
}

// A repack of a shard set over earlier quantize outputs (with their
// sidecars) whose commit stops part way: every complete shard is kept (in
// place, or under the temporary name the error gives), no old sidecar is
// left beside a new shard, a sidecar that cannot be removed keeps its file
// from being replaced, and the error names every shard.
func TestRepackShardSetCommitFailure(t *testing.T) {
	base := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	mustGquant(t, "quantize", "--split-max-tensors", "20", in, filepath.Join(base, "o"), "Q4_K_M")
	mustGquant(t, "quantize", "--split-max-tensors", "20", in, filepath.Join(base, "r"), "Q4_K_M")
	input := gguf.ShardPath(filepath.Join(base, "o"), 0, 3)
	side := pipeline.SidecarPath
	for _, tc := range []struct {
		name   string
		force  bool
		old    bool                           // the earlier r set is there
		spoil  func(t *testing.T, r []string) // while the shards are written
		placed int                            // shards new and in place
		failed int
		says   string
	}{
		{name: "later shard a directory", force: true, old: true, placed: 1, failed: 1,
			spoil: func(t *testing.T, r []string) { mkNonEmptyDir(t, r[1]) }},
		{name: "first sidecar a directory", force: true, old: true, placed: 0, failed: 0, says: "directory not empty",
			spoil: func(t *testing.T, r []string) { mkNonEmptyDir(t, side(r[0])) }},
		{name: "later shard appears", placed: 1, failed: 1, says: "file exists",
			spoil: func(t *testing.T, r []string) {
				if err := os.WriteFile(r[1], []byte("theirs"), 0o644); err != nil {
					t.Error(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := make([]string, 3)
			for i := range r {
				r[i] = gguf.ShardPath(filepath.Join(dir, "r"), i, 3)
				if !tc.old {
					continue
				}
				for _, p := range []string{r[i], side(r[i])} {
					data, err := os.ReadFile(filepath.Join(base, filepath.Base(p)))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			// What each path holds as the commit finds it.
			before := map[string][]byte{}
			stdout := &onFirstLine{do: func() {
				tc.spoil(t, r)
				for _, p := range r {
					before[p], _ = os.ReadFile(p)
					before[side(p)], _ = os.ReadFile(side(p))
				}
			}}
			args := []string{"repack", input, r[0]}
			if tc.force {
				args = []string{"repack", "--force", input, r[0]}
			}
			var stderr bytes.Buffer
			if code := run(args, stdout, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, stderr.String())
			}
			msg := stderr.String()
			for _, want := range []string{"output not put in place: " + r[tc.failed], tc.says, "not replaced by this run: " + strings.Join(r[tc.failed:], ", ")} {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not say %q: %s", want, msg)
				}
			}
			if tc.placed > 0 && !strings.Contains(msg, "new, in place: "+strings.Join(r[:tc.placed], ", ")) {
				t.Errorf("the error does not say which shards are in place: %s", msg)
			}
			for i, p := range r {
				if i < tc.placed {
					if _, err := os.Lstat(side(p)); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("the old sidecar %s is beside the new shard (%v)", side(p), err)
					}
					if got, err := os.ReadFile(p); err != nil || bytes.Equal(got, before[p]) {
						t.Errorf("%s is not the new shard (%v)", p, err)
					}
					continue
				}
				if got, _ := os.ReadFile(p); !bytes.Equal(got, before[p]) {
					t.Errorf("%s was changed", p)
				}
				if got, _ := os.ReadFile(side(p)); i > tc.failed && !bytes.Equal(got, before[side(p)]) {
					t.Errorf("%s was changed", side(p))
				}
				kept, _ := filepath.Glob(filepath.Join(dir, "."+filepath.Base(p)+".tmp-*"))
				if len(kept) != 1 || !strings.Contains(msg, kept[0]) {
					t.Errorf("the new %s is not kept under a temporary name the error gives (%v): %s", p, kept, msg)
					continue
				}
				if st, err := os.Stat(kept[0]); err != nil || st.Size() == 0 {
					t.Errorf("%s: %v", kept[0], err)
				}
			}
		})
	}
}

// mkNonEmptyDir puts a directory holding a file at path: no rename can
// replace it and no os.Remove remove it.
func mkNonEmptyDir(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Error(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), nil, 0o644); err != nil {
		t.Error(err)
	}
}

// repack --dry-run (and quantize --repack --dry-run, and with --json) runs
// the output checks without their effects: an output the run would refuse
// fails after the plan.
func TestRepackDryRunChecksOutputs(t *testing.T) {
	dir := t.TempDir()
	q := filepath.Join(dir, "q.gguf")
	mustGquant(t, "quantize", tinyModel, q, "Q4_K_M")
	ro := filepath.Join(dir, "ro.gguf")
	if err := os.WriteFile(ro, []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"repack", "--dry-run", "--force", q, ro},
		{"repack", "--dry-run", "--json", "--force", q, ro},
		{"quantize", "--repack", "--dry-run", "--force", q, ro, "Q4_K_R4"},
	} {
		failGquant(t, []string{"the run would stop before any work", "read-only"}, args...)
	}
	failGquant(t, []string{"is the input"}, "repack", "--dry-run", q, q)
	mustGquant(t, "repack", "--dry-run", q, filepath.Join(dir, "new.gguf"))
	if b, _ := os.ReadFile(ro); string(b) != "x" {
		t.Error("the read-only file changed")
	}
}

// quantize --repack applies --override-kv and writes the importance
// matrix's keys, as llama-quantize --repack does (checked against it with
// the golden imatrix, also with --hide-imatrix: byte-identical).
func TestRepackFormMetadata(t *testing.T) {
	chdirE2E(t)
	out := filepath.Join(t.TempDir(), "r.gguf")
	mustGquant(t, "quantize", "--repack", "--imatrix", "tiny-ds2.full.imatrix.dat", "--override-kv", "general.name=str:XYZ",
		"out-q4_k_m.gguf", out, "Q4_K_R4")
	m, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	md := m.Metadata
	if v, _ := md.Text("general.name"); v != "XYZ" {
		t.Errorf("general.name %q", v)
	}
	if v, _ := md.Text("quantize.imatrix.file"); v != "tiny-ds2.full.imatrix.dat" {
		t.Errorf("quantize.imatrix.file %q", v)
	}
	if n, _ := md.Int("quantize.imatrix.entries_count"); n == 0 {
		t.Error("no quantize.imatrix.entries_count")
	}
	failGquant(t, []string{"split"}, "quantize", "--repack", "--override-kv", "split.count=int:2", "out-q4_k_m.gguf", out+"2", "Q4_K_R4")
}

// Requantizing a row-interleaved input is refused by the plan as by the
// run: plan and --dry-run said yes where the run said no.
func TestPlanRefusesInterleavedInput(t *testing.T) {
	dir := t.TempDir()
	q, r := filepath.Join(dir, "q.gguf"), filepath.Join(dir, "r.gguf")
	mustGquant(t, "quantize", tinyModel, q, "Q4_0")
	mustGquant(t, "repack", q, r)
	for _, verb := range []string{"plan", "quantize"} {
		code, stdout, stderr := runGquant(verb, "--allow-requantize", r, filepath.Join(dir, verb+".gguf"), "Q8_0")
		if code != 1 || !strings.Contains(stderr, "requantizing from the row-interleaved q4_0_r8 is not supported") {
			t.Errorf("%s: status %d\n%s%s", verb, code, stdout, stderr)
		}
	}
}
