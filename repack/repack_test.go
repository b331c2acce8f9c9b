package repack

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/recipes"
)

// convertFile opens in, plans with opts and runs the plan to out.
func convertFile(t *testing.T, in, out string, opts Options) (*Plan, []string) {
	t.Helper()
	m, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p, err := NewPlan(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := Run(m, p, out)
	if err != nil {
		t.Fatal(err)
	}
	return p, paths
}

func sameBytes(t *testing.T, got, want string) {
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
		i := 0
		for i < min(len(g), len(w)) && g[i] == w[i] {
			i++
		}
		t.Errorf("%s (%d bytes) differs from %s (%d bytes) from byte %d", got, len(g), want, len(w), i)
	}
}

// TestGoldenQ4KM is `llama-quantize --repack out-q4_k_m.gguf
// out-q4_k_m-repacked.gguf Q4_K_R4` (golden/e2e/COMMANDS.md), then undo,
// which must give the input back exactly.
func TestGoldenQ4KM(t *testing.T) {
	dir := t.TempDir()
	in := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	out := filepath.Join(dir, "repacked.gguf")
	p, _ := convertFile(t, in, out, Options{Threads: 2})
	sameBytes(t, out, golden.Path(t, "e2e", "out-q4_k_m-repacked.gguf"))
	if p.FileType.From != recipes.FileTypeQ4_K_M || p.FileType.To != recipes.FileTypeQ4_K_R4 {
		t.Errorf("file type %s -> %s", p.FileType.From, p.FileType.To)
	}

	back := filepath.Join(dir, "back.gguf")
	convertFile(t, out, back, Options{Undo: true})
	sameBytes(t, back, in)
}

// TestShardSet repacks a two-shard set (golden llama-quantize --keep-split
// output): the shards keep their tensors, the tensor data equal that of the
// single-file repack, and undo gives the input shards back exactly.
func TestShardSet(t *testing.T) {
	dir := t.TempDir()
	prefix := golden.Path(t, "e2e", "split", "out-iq4_ks")
	in := gguf.ShardPath(prefix, 0, 2)
	_, paths := convertFile(t, in, filepath.Join(dir, "r.gguf"), Options{})
	want := []string{filepath.Join(dir, "r-00001-of-00002.gguf"), filepath.Join(dir, "r-00002-of-00002.gguf")}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("wrote %v, want %v", paths, want)
	}
	single := filepath.Join(dir, "single.gguf")
	convertFile(t, in, single, Options{Merge: true})

	sharded, err := gguf.Open(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	one, err := gguf.Open(single)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	orig, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	if len(one.Shards) != 1 || len(sharded.Shards) != 2 {
		t.Fatalf("%d and %d shards", len(one.Shards), len(sharded.Shards))
	}
	converted := 0
	for i, st := range sharded.Tensors {
		ot := orig.Tensors[i]
		if st.Name != ot.Name || st.Shard != ot.Shard {
			t.Errorf("tensor %d: %s in shard %d, input has %s in shard %d", i, st.Name, st.Shard, ot.Name, ot.Shard)
		}
		if st.Type != ot.Type {
			converted++
		}
		a, _ := io.ReadAll(sharded.TensorReader(i))
		b, _ := io.ReadAll(one.TensorReader(one.TensorIndex(st.Name)))
		if !bytes.Equal(a, b) || st.Type != one.Tensors[one.TensorIndex(st.Name)].Type {
			t.Errorf("%s differs between the shard set and the single file", st.Name)
		}
	}
	if converted == 0 {
		t.Error("nothing was converted")
	}
	if ft, _ := one.Metadata.Uint(keyFileType); recipes.FileType(ft) != recipes.FileTypeIQ4_KS_R4 {
		t.Errorf("general.file_type %d", ft)
	}
	if _, ok := one.Metadata.Lookup(gguf.KeySplitCount); ok {
		t.Error("merged output has split keys")
	}

	back := filepath.Join(dir, "back")
	_, backPaths := convertFile(t, paths[0], back, Options{Undo: true})
	for i, p := range backPaths {
		sameBytes(t, p, gguf.ShardPath(prefix, i, 2))
	}
}

func TestOutputs(t *testing.T) {
	p := &Plan{shards: 3}
	for _, tc := range []struct{ out, first string }{
		{"dir/x.gguf", "dir/x-00001-of-00003.gguf"},
		{"dir/x", "dir/x-00001-of-00003.gguf"},
		{"dir/x-00002-of-00003.gguf", "dir/x-00001-of-00003.gguf"},
		{"dir/x-00001-of-00002.gguf", "dir/x-00001-of-00002-00001-of-00003.gguf"},
	} {
		if got := p.Outputs(tc.out); len(got) != 3 || got[0] != tc.first {
			t.Errorf("Outputs(%q) = %v, want first %q", tc.out, got, tc.first)
		}
	}
	p.Options.Merge = true
	if got := p.Outputs("a.gguf"); len(got) != 1 || got[0] != "a.gguf" {
		t.Errorf("merged: %v", got)
	}
}

// TestPlanDecisions checks what the golden Q4_K_M model's tensors get, and why.
func TestPlanDecisions(t *testing.T) {
	m, err := gguf.Open(golden.Path(t, "e2e", "out-q4_k_m.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p, err := NewPlan(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]TensorPlan{}
	for _, tp := range p.Tensors {
		byName[tp.Name] = tp
	}
	for _, tc := range []struct {
		name   string
		to     formats.Type
		reason string
	}{
		{"token_embd.weight", formats.Q4_K, "token embeddings"},
		{"blk.0.attn_norm.weight", formats.F32, "no row-interleaved form"},
		{"blk.0.attn_q_a.weight", formats.Q4_K_R4, "q4_K -> q4_k_r4"},
		{"blk.0.attn_k_b.weight", formats.Q8_0_R8, "q8_0 -> q8_0_r8"},
		{"blk.1.ffn_down_exps.weight", 0, ""},
	} {
		tp, ok := byName[tc.name]
		if !ok {
			t.Errorf("no tensor %s", tc.name)
			continue
		}
		if tc.to == 0 {
			continue
		}
		if tp.To != tc.to || !strings.Contains(tp.Reason, tc.reason) {
			t.Errorf("%s: %s, %q; want %s, %q", tc.name, tp.To, tp.Reason, tc.to, tc.reason)
		}
	}
	var buf bytes.Buffer
	p.Describe(&buf)
	if !strings.Contains(buf.String(), "general.file_type Q4_K_M -> Q4_K_R4") {
		t.Errorf("Describe:\n%s", buf.String())
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	q4km := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	repacked := golden.Path(t, "e2e", "out-q4_k_m-repacked.gguf")
	bf16 := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	for _, tc := range []struct {
		name string
		in   string
		opts Options
		want []error
		text string
	}{
		{"already repacked", repacked, Options{}, []error{ErrAlreadyRepacked, ErrNothingToDo}, "--undo"},
		{"undo of a plain model", q4km, Options{Undo: true}, []error{ErrNothingToDo}, "no row-interleaved tensor"},
		{"pattern matches nothing", q4km, Options{Patterns: []string{`ffn_down`, `nope\.weight`}}, []error{ErrNoMatch}, `"nope\\.weight"`},
		{"pattern asks for f32", q4km, Options{Patterns: []string{`_norm\.weight`}}, []error{ErrNotRepackable}, "repackable: "},
		{"pattern asks for token_embd", q4km, Options{Patterns: []string{`token_embd`}}, []error{ErrNotRepackable}, "token embeddings are never repacked"},
		{"bad regex", q4km, Options{Patterns: []string{`blk.(`}}, []error{ErrPattern}, "blk.("},
		{"lenient unmatched pattern", q4km, Options{Patterns: []string{`nope`}, Lenient: true}, []error{ErrNothingToDo}, "among the tensors the patterns match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := gguf.Open(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			_, err = NewPlan(m, tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %q is not %v", err, w)
				}
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q does not say %q", err, tc.text)
			}
		})
	}

	t.Run("output is the input", func(t *testing.T) {
		in := filepath.Join(dir, "in.gguf")
		data, err := os.ReadFile(q4km)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := gguf.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		p, err := NewPlan(m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link.gguf")
		if err := os.Link(in, link); err != nil {
			t.Fatal(err)
		}
		for _, out := range []string{in, link, filepath.Join(dir, ".", "in.gguf")} {
			if _, err := Run(m, p, out); !errors.Is(err, gguf.ErrSameFile) {
				t.Errorf("Run to %s: %v, want gguf.ErrSameFile", out, err)
			}
		}
		after, _ := os.ReadFile(in)
		if !bytes.Equal(after, data) {
			t.Error("the input changed")
		}
	})

	t.Run("plan of another model", func(t *testing.T) {
		m, err := gguf.Open(q4km)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		other, err := gguf.Open(bf16)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		p, err := NewPlan(m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(other, p, filepath.Join(dir, "x.gguf")); !errors.Is(err, ErrPlan) {
			t.Errorf("got %v, want ErrPlan", err)
		}
	})
}

// TestPartlyRepacked: the reference's --repack on a repacked file still
// converts tensors left in base types; so do we, with a warning.
func TestPartlyRepacked(t *testing.T) {
	dir := t.TempDir()
	in := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	part := filepath.Join(dir, "part.gguf")
	convertFile(t, in, part, Options{Patterns: []string{`ffn_`}})
	full := filepath.Join(dir, "full.gguf")
	p, _ := convertFile(t, part, full, Options{})
	if len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "already partly repacked") {
		t.Errorf("warnings %q", p.Warnings)
	}
	// The file type went to Q4_K_R4 at the first step and stays.
	if p.FileType.To != recipes.FileTypeQ4_K_R4 {
		t.Errorf("file type %s", p.FileType.To)
	}
	sameBytes(t, full, golden.Path(t, "e2e", "out-q4_k_m-repacked.gguf"))
}

func TestFileTypes(t *testing.T) {
	for _, f := range recipes.FileTypes() {
		r := RepackedFileType(f)
		if r == f {
			if IsRepackedFileType(f) && UndoFileType(f) == f && f != recipes.FileTypeQ8_K_R8 && f != recipes.FileTypeMXFP4_R8 {
				t.Errorf("%s: repacked file type without an undo", f)
			}
			continue
		}
		if !IsRepackedFileType(r) {
			t.Errorf("%s -> %s, which is not a repacked file type", f, r)
		}
		if back := UndoFileType(r); RepackedFileType(back) != r {
			t.Errorf("undo of %s is %s, which repacks to %s", r, back, RepackedFileType(back))
		}
	}
	for r, want := range map[recipes.FileType]recipes.FileType{
		recipes.FileTypeQ3_K_R4:  recipes.FileTypeQ3_K_M,
		recipes.FileTypeQ4_K_R4:  recipes.FileTypeQ4_K_M,
		recipes.FileTypeQ5_K_R4:  recipes.FileTypeQ5_K_M,
		recipes.FileTypeIQ2_M_R4: recipes.FileTypeIQ2_M,
		recipes.FileTypeQ8_0_R8:  recipes.FileTypeQ8_0,
		recipes.FileTypeQ6_K:     recipes.FileTypeQ6_K,
		recipes.FileTypeQ4_0_4_4: recipes.FileTypeQ4_0,
		recipes.FileTypeQ4_0_8_8: recipes.FileTypeQ4_0,
	} {
		if got := UndoFileType(r); got != want {
			t.Errorf("UndoFileType(%s) = %s, want %s", r, got, want)
		}
	}
	// The loader's guess: the first type to reach the top count wins.
	if got := GuessFileType([]formats.Type{formats.F32, formats.Q4_K, formats.Q4_K, formats.F32}); got != recipes.FileTypeQ4_K_M|recipes.FileTypeGuessed {
		t.Errorf("guess %s", got)
	}
	if got := GuessFileType([]formats.Type{formats.MXFP4_R8}); got != recipes.FileTypeAllF32|recipes.FileTypeGuessed {
		t.Errorf("guess %s", got)
	}
}

// The buffers in flight do not grow with the thread count: at most
// memoryBudget of them, and a run with more threads than buffer sets
// gives the same bytes.
func TestConverterMemoryBounded(t *testing.T) {
	for _, threads := range []int{1, 2, 8, 64, 128} {
		c := newConverter(threads)
		if n := cap(c.free); n > max(3, memoryBudget/(2*chunkBytes)) || n < min(threads+2, 3) {
			t.Errorf("%d threads: %d buffer sets", threads, n)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "repacked.gguf")
	convertFile(t, golden.Path(t, "e2e", "out-q4_k_m.gguf"), out, Options{Threads: 64})
	sameBytes(t, out, golden.Path(t, "e2e", "out-q4_k_m-repacked.gguf"))
}
