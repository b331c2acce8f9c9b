package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/recipes"
)

// FuzzSidecar reads a fuzzed sidecar beside a real output through every
// path that trusts one: verify (with and without the plan), the check of
// a kept output, --reuse (opening, then a run reusing what it accepts),
// and the carry of split and merge. Each must answer with an error or a
// result; none may panic, read outside the file, or write a wrong byte:
// a run reusing from a lying sidecar still writes the plan's bytes.
func FuzzSidecar(f *testing.F) {
	dir := f.TempDir()
	out := filepath.Join(dir, "earlier.gguf")
	in, plan := tinyQ8Plan(f, out)
	if err := Run(context.Background(), in, plan.Outputs, Options{}); err != nil {
		f.Fatal(err)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(SidecarPath(out))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	for _, swap := range [][2]string{
		{`"offset": `, `"offset": 9`},
		{`"size": `, `"size": 1`},
		{`"offset": `, `"offset": -`},
		{`"name": "blk.0`, `"name": "blk.1`},
		{`"type": "q8_0"`, `"type": "f32"`},
		{`"shape": [`, `"shape": [0,`},
	} {
		f.Add(bytes.Replace(good, []byte(swap[0]), []byte(swap[1]), 1))
	}
	f.Add([]byte(`{"schema":"gquant.sidecar/1","tensors":[{"name":"x","offset":1e300}]}`))

	// What a merge of this one-file set stages: the same bytes, whose
	// sidecar the carry makes from the fuzzed one.
	carried := filepath.Join(dir, "carried.gguf")
	if err := os.WriteFile(carried, want, 0o644); err != nil {
		f.Fatal(err)
	}
	carry := func() ([]string, error) {
		m, err := gguf.Open(out)
		if err != nil {
			return nil, err
		}
		defer m.Close()
		defer os.Remove(SidecarPath(carried))
		missing, _, err := CarrySidecars(m, []string{carried})
		if err == nil && len(missing) == 0 {
			_, err = ReadSidecar(carried)
		}
		return missing, err
	}
	if missing, err := carry(); err != nil || len(missing) > 0 {
		f.Fatalf("the good sidecar is not carried: %v, missing %v", err, missing)
	}
	fresh := filepath.Join(dir, "fresh.gguf")
	_, freshPlan := tinyQ8Plan(f, fresh)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, sc []byte) {
		if err := os.WriteFile(SidecarPath(out), sc, 0o644); err != nil {
			t.Fatal(err)
		}
		VerifySet(ctx, out, in, plan)
		VerifySet(ctx, out, in, nil)
		VerifyKept(ctx, in, plan)
		carry()
		r, err := OpenReuse([]string{out}, func(string) {})
		if err != nil {
			return
		}
		defer r.Close()
		if !r.Usable() {
			return
		}
		if err := Run(ctx, in, freshPlan.Outputs, Options{Reuse: r}); err != nil {
			t.Fatalf("a run reusing from the fuzzed sidecar failed: %v", err)
		}
		got, err := os.ReadFile(fresh)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("a run reusing from the fuzzed sidecar wrote other bytes (%v)", err)
		}
		os.Remove(fresh)
		os.Remove(SidecarPath(fresh))
	})
}

// tinyQ8Plan opens the tiny model (closed when tb ends) and plans its
// Q8_0 run into out: the fuzz targets' real output, quick to write.
func tinyQ8Plan(tb testing.TB, out string) (*gguf.Model, *Plan) {
	tb.Helper()
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { in.Close() })
	ft, _, _ := recipes.ParseFileType("Q8_0")
	plan, err := Build(in, Config{Selection: recipes.Options{FileType: ft}, Output: out})
	if err != nil {
		tb.Fatal(err)
	}
	return in, plan
}
