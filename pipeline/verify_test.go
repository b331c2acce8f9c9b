package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
	"github.com/gquant/gquant/splitter"
)

// VerifySet on a set the runs of three parts wrote, intact and then
// damaged in each way it must see.
func TestVerifySet(t *testing.T) {
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dir := t.TempDir()
	build := func(ft string, only string, overrides ...KV) *Plan {
		t.Helper()
		f, _, _ := recipes.ParseFileType(ft)
		cfg := Config{Selection: recipes.Options{FileType: f}, Output: filepath.Join(dir, "out"),
			Split: &splitter.Limits{MaxTensors: 12}, Overrides: overrides}
		if only != "" {
			sel, _ := ParseShardSelection(only)
			cfg.OnlyShards = &sel
		}
		plan, err := Build(in, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	var plan *Plan
	for _, part := range []string{"1/3", "2/3", "3/3"} {
		plan = build("Q8_0", part)
		if err := Run(context.Background(), in, plan.Outputs, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	plan = build("Q8_0", "")
	n := len(plan.Outputs)
	shard := func(i int) string { return gguf.ShardPath(filepath.Join(dir, "out"), i, n) }
	check := func(path string, p *Plan) *SetCheck {
		t.Helper()
		c, err := VerifySet(context.Background(), path, in, p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// problems lists every problem, as "FILE-INDEX: problem".
	problems := func(c *SetCheck) string {
		var out []string
		out = append(out, c.Problems...)
		for _, f := range c.Files {
			for _, p := range f.Problems {
				out = append(out, filepath.Base(f.Path)+": "+p)
			}
		}
		return strings.Join(out, "\n")
	}
	for _, p := range []*Plan{nil, plan} {
		c := check(shard(1), p)
		if !c.OK() || c.Count != n || len(c.Files) != n || c.Tensors != len(in.Tensors) {
			t.Fatalf("intact set (plan %v): ok %v, %d of %d files, %d tensors:\n%s", p != nil, c.OK(), len(c.Files), c.Count, c.Tensors, problems(c))
		}
		for _, f := range c.Files {
			if f.Sidecar != "ok" || f.Hashed != f.Tensors || f.Header != "ok" {
				t.Errorf("%s: sidecar %q, %d of %d tensors hashed, header %q", f.Path, f.Sidecar, f.Hashed, f.Tensors, f.Header)
			}
		}
	}
	if c := check(shard(0), build("Q8_0", "2")); !c.OK() || len(c.Files) != 1 || c.Files[0].Index != 2 {
		t.Errorf("shard 2 alone: ok %v, %d files:\n%s", c.OK(), len(c.Files), problems(c))
	}

	for _, tc := range []struct {
		name   string
		damage func() (undo func())
		plan   *Plan
		want   string
	}{
		{"missing shard", func() func() { return move(t, shard(1), shard(1)+".away") }, nil, "out-00002-of-0000" + string(rune('0'+n)) + ".gguf: missing"},
		{"changed byte", func() func() { return flipByte(t, shard(2), -100) }, nil, "are not the ones its sidecar recorded"},
		// general.architecture's value: the tensor bytes are intact.
		{"changed metadata", func() func() { return flipByte(t, shard(0), 40) }, nil, "its header (metadata and tensor infos) is not the one its sidecar recorded"},
		{"shard in another's place", func() func() {
			undo := move(t, shard(2), shard(2)+".away")
			b, _ := os.ReadFile(shard(1))
			os.WriteFile(shard(2), b, 0o644)
			os.WriteFile(SidecarPath(shard(2)), nil, 0o644)
			return func() { os.Remove(SidecarPath(shard(2))); undo() }
		}, nil, "split.no is 1 (shard 2; it counts from 0), where shard 3 of the set has 2"},
		{"other type", func() func() { return func() {} }, build("Q4_0", ""), "the plan has q4_0"},
		{"other metadata", func() func() { return func() {} }, build("Q8_0", "", KV{Key: "general.name", Value: gguf.StringValue("other")}), "not the plan's header"},
		{"sidecar of another file", func() func() {
			b, _ := os.ReadFile(SidecarPath(shard(0)))
			undo := move(t, SidecarPath(shard(1)), SidecarPath(shard(1))+".away")
			os.WriteFile(SidecarPath(shard(1)), b, 0o644)
			return func() { os.Remove(SidecarPath(shard(1))); undo() }
		}, nil, "its sidecar describes out-00001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			undo := tc.damage()
			defer undo()
			c := check(shard(0), tc.plan)
			if c.OK() || !strings.Contains(problems(c), tc.want) {
				t.Errorf("ok %v, problems:\n%s\nwant one with %q", c.OK(), problems(c), tc.want)
			}
		})
	}

	// A shard cut short is that shard's problem alone: the tensors it
	// can no longer show are not also a set problem (split.tensors.count
	// against the sum of the others).
	for _, p := range []*Plan{nil, plan} {
		whole, err := os.ReadFile(shard(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(shard(1), int64(len(whole))/2); err != nil {
			t.Fatal(err)
		}
		c := check(shard(0), p)
		if err := os.WriteFile(shard(1), whole, 0o644); err != nil {
			t.Fatal(err)
		}
		if c.OK() || len(c.Problems) != 0 || len(c.Files[1].Problems) != 1 {
			t.Errorf("a truncated shard (plan %v): set problems %q, the shard's %q", p != nil, c.Problems, c.Files[1].Problems)
		}
	}

	// No sidecar: checked on the header alone, with a note.
	undo := move(t, SidecarPath(shard(0)), SidecarPath(shard(0))+".away")
	c := check(shard(0), plan)
	undo()
	if !c.OK() || c.Files[0].Sidecar != "absent" || len(c.Files[0].Notes) == 0 {
		t.Errorf("without a sidecar: ok %v, sidecar %q, notes %q:\n%s", c.OK(), c.Files[0].Sidecar, c.Files[0].Notes, problems(c))
	}
	// A single file.
	one := filepath.Join(dir, "one.gguf")
	f, _, _ := recipes.ParseFileType("Q8_0")
	p1, err := Build(in, Config{Selection: recipes.Options{FileType: f}, Output: one})
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), in, p1.Outputs, Options{}); err != nil {
		t.Fatal(err)
	}
	if c := check(one, nil); !c.OK() || c.Count != 1 || c.Files[0].Hashed != len(in.Tensors) {
		t.Errorf("one file: ok %v, %d files, %d hashed:\n%s", c.OK(), c.Count, c.Files[0].Hashed, problems(c))
	}
	if c := check(one, p1); !c.OK() || c.Files[0].Header != "ok" {
		t.Errorf("one file with its plan: ok %v, header %q:\n%s", c.OK(), c.Files[0].Header, problems(c))
	}
}

// move renames a file and returns the undo.
func move(t *testing.T, from, to string) func() {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	return func() { os.Rename(to, from) }
}

// flipByte changes the byte at off (from the end when negative) and
// returns the undo.
func flipByte(t *testing.T, path string, off int64) func() {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		b[off] ^= 0x40
		os.WriteFile(path, b, 0o644)
	}
}

// A set mixed from two runs (what a commit that fails part way under
// --force leaves) is consistent file by file, but its sidecars name
// different sets: VerifySet says so without a plan. Each sidecar's header
// hash is the planned one, and the sidecars of one run name one set.
func TestVerifySetMixedRuns(t *testing.T) {
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var kernel quantize.Options
	run := func(dir, ft string) *Plan {
		t.Helper()
		f, _, _ := recipes.ParseFileType(ft)
		plan, err := Build(in, Config{Selection: recipes.Options{FileType: f}, Output: filepath.Join(dir, "out"), Split: &splitter.Limits{MaxTensors: 12}, Kernel: kernel})
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(context.Background(), in, plan.Outputs, Options{}); err != nil {
			t.Fatal(err)
		}
		return plan
	}
	a, b := t.TempDir(), t.TempDir()
	plan := run(a, "Q8_0")
	run(b, "Q4_0")
	set := ""
	for i, o := range plan.Outputs {
		sc, err := ReadSidecar(o.Path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := plannedHeader(o, sc.Tensors[0].Offset)
		if err != nil || sc.Header != want {
			t.Errorf("%s: header hash %s, planned %s (%v)", o.Path, sc.Header, want, err)
		}
		if i > 0 && sc.Set != set {
			t.Errorf("%s names set %s, the first %s", o.Path, sc.Set, set)
		}
		set = sc.Set
	}
	first := plan.Outputs[0].Path
	c, err := VerifySet(context.Background(), first, nil, nil)
	if err != nil || len(c.Problems) > 0 {
		t.Fatalf("the intact set: %v, %q", err, c.Problems)
	}
	// The OUT the run was given names no file; the note points to a shard.
	c, err = VerifySet(context.Background(), filepath.Join(a, "out.gguf"), nil, nil)
	if err != nil || c.OK() || !strings.Contains(strings.Join(c.Notes, "\n"), "but "+first+" does: give a shard") {
		t.Errorf("OUT.gguf of a split run: %v, notes %q", err, c.Notes)
	}
	copyWithSidecar(t, filepath.Join(b, filepath.Base(plan.Outputs[1].Path)), a)
	c, err = VerifySet(context.Background(), first, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Problems, "\n"); !strings.Contains(got, "not written together") {
		t.Errorf("a mixed set: problems %q", got)
	}
	// Against the plan, the foreign shard's sidecar names another set.
	c, err = VerifySet(context.Background(), first, in, plan)
	if err != nil || c.OK() || !strings.Contains(strings.Join(c.Files[1].Problems, "\n"), "another set of files than this plan's") {
		t.Errorf("a mixed set against the plan: %v, %+v", err, c.Files[1])
	}

	// Parts of a job array given other kernel options (or importance
	// data) write the same headers: the sets still differ.
	c4, q4 := t.TempDir(), t.TempDir()
	plan4 := run(c4, "Q4_0")
	kernel.SymmetricQ40 = true
	run(q4, "Q4_0")
	kernel.SymmetricQ40 = false
	copyWithSidecar(t, filepath.Join(q4, filepath.Base(plan4.Outputs[1].Path)), c4)
	c, err = VerifySet(context.Background(), plan4.Outputs[0].Path, nil, nil)
	if err != nil || !strings.Contains(strings.Join(c.Problems, "\n"), "not written together") {
		t.Errorf("parts made with other options: %v, problems %q", err, c.Problems)
	}

	// A run killed while it put its files in place: one file has lost its
	// old sidecar. Without a plan, that file is suspect.
	run(a, "Q8_0")
	if err := os.Remove(SidecarPath(plan.Outputs[1].Path)); err != nil {
		t.Fatal(err)
	}
	c, err = VerifySet(context.Background(), first, nil, nil)
	if err != nil || c.OK() || !strings.Contains(strings.Join(c.Files[1].Problems, "\n"), "no sidecar where the set's others name their set") {
		t.Errorf("a file without its sidecar: %v, %+v", err, c.Files[1])
	}

	// --partial-requant keeps the files that match the new plan: their
	// sidecars then name the new set, and the set verifies.
	run(a, "Q8_0")
	f, _, _ := recipes.ParseFileType("Q8_0")
	rules, err := recipes.ParseCustomQ(`blk\.2\.ffn_down_shexp=q4_0`)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Build(in, Config{Selection: recipes.Options{FileType: f, Rules: rules}, Output: filepath.Join(a, "out"),
		Split: &splitter.Limits{MaxTensors: 12}, PartialRequant: true})
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, o := range p2.Outputs {
		if o.Skip {
			kept++
		}
	}
	if kept == 0 || kept == len(p2.Outputs) {
		t.Fatalf("%d of %d outputs kept: the test needs some of each", kept, len(p2.Outputs))
	}
	if err := Run(context.Background(), in, p2.Outputs, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Plan{nil, p2} {
		c, err = VerifySet(context.Background(), first, in, p)
		if err != nil || !c.OK() {
			t.Errorf("after --partial-requant (plan %v): %v, %q %+v", p != nil, err, c.Problems, c.Files)
		}
	}
}

// A set written by one run whose first shard's header is not the plan's
// (an importance matrix path spelt otherwise on the machine that verifies:
// only the first shard records it) fails on that shard alone. The others
// are the plan's to the byte, but their sidecars name the set they were
// written with, which holds the first shard's header: each was reported
// as "a file of another run" beside the real difference.
func TestVerifySetOneHeaderDiffers(t *testing.T) {
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dir := t.TempDir()
	build := func(value string) *Plan {
		t.Helper()
		f, _, _ := recipes.ParseFileType("Q8_0")
		plan, err := Build(in, Config{Selection: recipes.Options{FileType: f}, Output: filepath.Join(dir, "out"),
			Split: &splitter.Limits{MaxTensors: 12}, Overrides: []KV{{Key: "quantize.imatrix.file", Value: gguf.StringValue(value)}}})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	written := build("imatrix.dat")
	if err := Run(context.Background(), in, written.Outputs, Options{}); err != nil {
		t.Fatal(err)
	}
	c, err := VerifySet(context.Background(), written.Outputs[0].Path, in, build("../imatrix.dat"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) < 3 {
		t.Fatalf("%d files: the test needs three or more", len(c.Files))
	}
	if c.OK() || c.Files[0].Header != "differs" || !strings.Contains(strings.Join(c.Files[0].Problems, "\n"), "quantize.imatrix.file") ||
		strings.Contains(strings.Join(c.Files[0].Problems, "\n"), "another run") {
		t.Errorf("the first shard: %+v", c.Files[0])
	}
	for _, f := range c.Files[1:] {
		if len(f.Problems) > 0 || !strings.Contains(strings.Join(f.Notes, "\n"), "because "+c.Files[0].Path+" is not the plan's") {
			t.Errorf("%s: problems %q, notes %q; want none, and a note naming the first shard", f.Path, f.Problems, f.Notes)
		}
	}
	if len(c.Problems) > 0 {
		t.Errorf("the set's problems: %q", c.Problems)
	}
}

// Splitting or merging a set whose sidecars name different sets (shards of
// two runs) carries no sidecars and says why: the outputs must not be
// trusted as one set.
func TestCarryRefusesMixedSet(t *testing.T) {
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	a, b := t.TempDir(), t.TempDir()
	var plan *Plan
	for _, tc := range []struct{ dir, ft string }{{a, "Q8_0"}, {b, "Q4_0"}} {
		f, _, _ := recipes.ParseFileType(tc.ft)
		plan, err = Build(in, Config{Selection: recipes.Options{FileType: f}, Output: filepath.Join(tc.dir, "out"), Split: &splitter.Limits{MaxTensors: 12}})
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(context.Background(), in, plan.Outputs, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	// Shard 2 of a from b's run, with its sidecar.
	copyWithSidecar(t, filepath.Join(b, filepath.Base(plan.Outputs[1].Path)), a)
	mixed, err := gguf.Open(filepath.Join(a, filepath.Base(plan.Outputs[0].Path)))
	if err != nil {
		t.Fatal(err)
	}
	defer mixed.Close()
	out := filepath.Join(t.TempDir(), "m.gguf")
	if err := splitter.MergeModel(mixed, out, nil); err != nil {
		t.Fatal(err)
	}
	// The error names the first shard of each run's files (1 and 2), not
	// the last one of a run that happens to come before the foreign shard.
	_, _, err = CarrySidecars(mixed, []string{out})
	if !errors.Is(err, ErrMixedSet) {
		t.Errorf("carrying a mixed set's sidecars: %v, want ErrMixedSet", err)
	} else if names := "(" + mixed.Shards[0].Path + ", " + mixed.Shards[1].Path + ")"; !strings.Contains(err.Error(), names) {
		t.Errorf("carrying a mixed set's sidecars: %v, want it to name %s", err, names)
	}
	if _, err := os.Stat(SidecarPath(out)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a sidecar was carried: %v", err)
	}
}

// A run killed after it put a file in place and before it wrote the
// file's sidecar leaves the file without one and the progress record of
// the temporary file it was alone. --resume (FindResumable) keeps the file,
// checked against the record and the plan, and writes the sidecar.
func TestResumeKeepsPlacedWithoutSidecar(t *testing.T) {
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dir := t.TempDir()
	f, _, _ := recipes.ParseFileType("Q8_0")
	build := func() *Plan {
		plan, err := Build(in, Config{Selection: recipes.Options{FileType: f}, Output: filepath.Join(dir, "out"), Split: &splitter.Limits{MaxTensors: 12}, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	plan := build()
	if err := Run(context.Background(), in, plan.Outputs, Options{}); err != nil {
		t.Fatal(err)
	}
	out := plan.Outputs[1].Path
	want, err := os.ReadFile(SidecarPath(out))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ReadSidecar(out)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(SidecarPath(out))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, fmt.Sprintf("%s%d-abcdef", gguf.TempPrefix(out), cmd.Process.Pid))
	j, err := createJournal(tmp, out, sc.Size, sc.Tensors)
	if err != nil {
		t.Fatal(err)
	}
	j.close()

	plan = build()
	if _, err := FindResumable(context.Background(), in, plan.Outputs, func(s string) { t.Log(s) }); err != nil {
		t.Fatal(err)
	}
	if !plan.Outputs[1].Skip {
		t.Errorf("%s not kept", out)
	}
	if got, err := os.ReadFile(SidecarPath(out)); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the sidecar written again: %v\n%s\nwant\n%s", err, got, want)
	}
	if _, err := os.Stat(journalPath(tmp)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the progress record is still there: %v", err)
	}

	// Killed after the sidecar too: the file is kept as this plan's, and
	// the orphaned record goes.
	j, err = createJournal(tmp, out, sc.Size, sc.Tensors)
	if err != nil {
		t.Fatal(err)
	}
	j.close()
	plan = build()
	if _, err := FindResumable(context.Background(), in, plan.Outputs, nil); err != nil || !plan.Outputs[1].Skip {
		t.Fatalf("%v, kept %v", err, plan.Outputs[1].Skip)
	}
	if _, err := os.Stat(journalPath(tmp)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the orphaned progress record is still there: %v", err)
	}
}

// copyWithSidecar copies the file at path and its sidecar into dir.
func copyWithSidecar(t *testing.T, path, dir string) {
	t.Helper()
	for _, p := range []string{path, SidecarPath(path)} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
