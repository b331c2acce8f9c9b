package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/recipes"
	"github.com/gquant/gquant/splitter"
)

func TestParseShardSelection(t *testing.T) {
	for _, tc := range []struct {
		in          string
		shards      []int
		part, parts int
		err         bool
	}{
		{in: "3", shards: []int{3}},
		{in: "3,4", shards: []int{3, 4}},
		{in: "3-5", shards: []int{3, 4, 5}},
		{in: "5,1,3-4,4", shards: []int{1, 3, 4, 5}},
		{in: "2-2", shards: []int{2}},
		{in: "1/3", part: 1, parts: 3},
		{in: "3/3", part: 3, parts: 3},
		{in: "1/1", part: 1, parts: 1},
		{in: "", err: true},
		{in: "0", err: true},
		{in: "-1", err: true},
		{in: "5-3", err: true},
		{in: "3-", err: true},
		{in: "a", err: true},
		{in: "1,,2", err: true},
		{in: "0/3", err: true},
		{in: "4/3", err: true},
		{in: "1/0", err: true},
		{in: "1/x", err: true},
		{in: "1/3,2", err: true},
		{in: "1-99999999", err: true},
		{in: "65535", shards: []int{65535}},
		{in: "65536", err: true},
		// The largest ints: a loop up to them never ended.
		{in: "9223372036854775807", err: true},
		{in: "9223372036854775806-9223372036854775807", err: true},
		{in: "99999999999999999999", err: true},
		{in: "1-99999999999999999999", err: true},
		{in: "1/99999999999999999999", err: true},
	} {
		sel, err := ParseShardSelection(tc.in)
		if tc.err {
			if !errors.Is(err, ErrShardSelection) {
				t.Errorf("%q: error %v, want ErrShardSelection", tc.in, err)
			}
			continue
		}
		k, n := sel.Part()
		if err != nil || !slices.Equal(sel.shards, tc.shards) || k != tc.part || n != tc.parts || sel.String() != tc.in {
			t.Errorf("%q: %v %d/%d %v, want %v %d/%d", tc.in, sel.shards, k, n, err, tc.shards, tc.part, tc.parts)
		}
	}
	sel, _ := ParseShardSelection("2,5")
	if _, err := sel.Resolve(make([]time.Duration, 4)); !errors.Is(err, ErrShardSelection) {
		t.Errorf("shard 5 of 4: error %v, want ErrShardSelection", err)
	}
	if got, err := sel.Resolve(make([]time.Duration, 5)); err != nil || !slices.Equal(got, []int{1, 4}) {
		t.Errorf("2,5 of 5: %v %v, want [1 4]", got, err)
	}
	sel, _ = ParseShardSelection("3/3")
	if got, err := sel.Resolve(make([]time.Duration, 2)); err != nil || len(got) != 0 {
		t.Errorf("3/3 of 2 shards: %v %v, want nothing", got, err)
	}
}

// bestLimit is the smallest largest part of any cut of work into n runs,
// by trying every cut.
func bestLimit(work []time.Duration, n int) time.Duration {
	best := time.Duration(-1)
	var try func(start, left int, worst time.Duration)
	try = func(start, left int, worst time.Duration) {
		if left == 1 {
			var sum time.Duration
			for _, w := range work[start:] {
				sum += w
			}
			if w := max(worst, sum); best < 0 || w < best {
				best = w
			}
			return
		}
		var sum time.Duration
		for e := start; e <= len(work); e++ {
			try(e, left-1, max(worst, sum))
			if e < len(work) {
				sum += work[e]
			}
		}
	}
	try(0, n, 0)
	return best
}

// AssignParts cuts into consecutive runs whose largest is the smallest
// possible, leaves no part empty while shards remain, and depends on the
// work alone.
func TestAssignParts(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 3))
	for iter := 0; iter < 400; iter++ {
		s, n := 1+r.IntN(9), 1+r.IntN(5)
		work := make([]time.Duration, s)
		for i := range work {
			switch r.IntN(4) {
			case 0:
				work[i] = time.Duration(r.IntN(3)) // tiny and zero
			default:
				work[i] = time.Duration(r.Int64N(1e15))
			}
		}
		part := AssignParts(work, n)
		if len(part) != s {
			t.Fatalf("%v into %d: %d parts for %d shards", work, n, len(part), s)
		}
		loads := make([]time.Duration, n+1)
		for i, p := range part {
			if p < 1 || p > n || i > 0 && p != part[i-1] && p != part[i-1]+1 {
				t.Fatalf("%v into %d: parts %v are not consecutive runs from 1", work, n, part)
			}
			loads[p] += work[i]
		}
		if part[0] != 1 || part[s-1] != min(s, n) {
			t.Errorf("%v into %d: parts %v, want 1 to %d", work, n, part, min(s, n))
		}
		if got, want := slices.Max(loads), bestLimit(work, n); got != want {
			t.Errorf("%v into %d: parts %v, largest %d, the best cut has %d", work, n, part, got, want)
		}
		if again := AssignParts(slices.Clone(work), n); !slices.Equal(again, part) {
			t.Errorf("%v into %d: %v, then %v", work, n, part, again)
		}
	}
	// Equal shards: parts as equal as they can be.
	eq := make([]time.Duration, 8)
	for i := range eq {
		eq[i] = time.Second
	}
	if got, want := AssignParts(eq, 3), []int{1, 1, 1, 2, 2, 3, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("8 equal shards into 3: %v, want %v", got, want)
	}
	// Work, not count: one heavy shard is a part of its own.
	if got, want := AssignParts([]time.Duration{1, 1, 9, 1, 1, 1}, 3), []int{1, 1, 2, 3, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("heavy middle shard: %v, want %v", got, want)
	}
	if got := AssignParts(eq[:2], 4); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("2 shards into 4: %v, want [1 2]", got)
	}
}

// testImatrix returns an importance matrix with an entry for every 2-D and
// 3-D bf16 tensor of in, all values positive.
func testImatrix(in *gguf.Model) *imatrix.Matrix {
	m := &imatrix.Matrix{Format: imatrix.FormatDat, Chunks: 4, Datasets: []string{"test"}}
	r := rand.New(rand.NewPCG(22, 22))
	for _, t := range in.Tensors {
		if len(t.Shape) < 2 || t.Name == "token_embd.weight" || t.Type.String() != "bf16" {
			continue
		}
		n := t.Shape[0]
		if len(t.Shape) > 2 {
			n *= t.Shape[2]
		}
		sums := make([]float32, n)
		for i := range sums {
			sums[i] = float32(0.1 + 4*r.Float64())
		}
		m.Entries = append(m.Entries, imatrix.Entry{Name: t.Name, Sums: sums, Counts: []float64{4}})
	}
	return m
}

// readAll reads every file of dir (the outputs and their sidecars).
func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// The union of the runs of parts 1/3, 2/3 and 3/3 is, file for file and
// byte for byte (sidecars included), what one run writes: a plain file
// type, an i-quant with importance data, and a recipe of rules.
func TestOnlyShardsUnion(t *testing.T) {
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	rules, err := recipes.ParseCustomQ(`token_embd\.weight=q8_0,blk\.0\..*=q6_K,ffn_down_exps=iq3_k_r4,ffn_(gate|up)_exps=iq2_ks,attn_.*=q8_0,shexp=iq4_ks`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		ft      string
		imatrix bool
		rules   *recipes.RuleSet
		limits  splitter.Limits
	}{
		{"plain Q8_0", "Q8_0", false, nil, splitter.Limits{MaxBytes: 1_000_000}},
		{"imatrix IQ4_KS", "IQ4_KS", true, nil, splitter.Limits{MaxTensors: 12}},
		{"recipe", "IQ2_K_R4", true, rules, splitter.Limits{MaxBytes: 500_000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft, _, err := recipes.ParseFileType(tc.ft)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Selection: recipes.Options{FileType: ft, Rules: tc.rules}, Split: &tc.limits}
			if tc.imatrix {
				cfg.Imatrix, cfg.ImatrixPath = testImatrix(in), "test.imatrix.dat"
			}
			run := func(dir, only string) *Plan {
				t.Helper()
				c := cfg
				c.Output = filepath.Join(dir, "out")
				if only != "" {
					sel, err := ParseShardSelection(only)
					if err != nil {
						t.Fatal(err)
					}
					c.OnlyShards = &sel
				}
				plan, err := Build(in, c)
				if err != nil {
					t.Fatal(err)
				}
				if err := Run(context.Background(), in, plan.Outputs, Options{Threads: 2}); err != nil {
					t.Fatal(err)
				}
				return plan
			}
			one, parts := t.TempDir(), t.TempDir()
			plan := run(one, "")
			if len(plan.Outputs) < 3 {
				t.Fatalf("%d shards, want 3 or more", len(plan.Outputs))
			}
			written := 0
			for k := 1; k <= 3; k++ {
				p := run(parts, fmt.Sprintf("%d/3", k))
				for _, o := range p.Outputs {
					if !o.Elsewhere {
						written++
					}
				}
			}
			if written != len(plan.Outputs) {
				t.Errorf("the parts wrote %d shards, the plan has %d", written, len(plan.Outputs))
			}
			want, got := readAll(t, one), readAll(t, parts)
			if len(want) != 2*len(plan.Outputs) {
				t.Errorf("one run wrote %d files, want %d shards and their sidecars", len(want), len(plan.Outputs))
			}
			for name, b := range want {
				if !bytes.Equal(got[name], b) {
					t.Errorf("%s: the parts' file (%d bytes) differs from one run's (%d bytes)", name, len(got[name]), len(b))
				}
			}
			for name := range got {
				if want[name] == nil {
					t.Errorf("the parts wrote %s, one run did not", name)
				}
			}
		})
	}
}

// poison overwrites the tensor data of a GGUF file with 0xff bytes (NaN in
// bf16 and f32), keeping its header.
func poison(t *testing.T, path string) {
	t.Helper()
	f, size, err := gguf.OpenRegular(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := gguf.Read(f, size)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := h.DataOffset; i < int64(len(b)); i++ {
		b[i] = 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run of some shards reads only the input tensors they are made from: with
// the input a shard set, poisoning the data of the input shards no
// selected output needs changes nothing.
func TestOnlyShardsReadsItsInputs(t *testing.T) {
	dir := t.TempDir()
	src, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dir, "in")
	if _, err := splitter.Split(src, prefix, splitter.Limits{MaxTensors: 20}, nil); err != nil {
		t.Fatal(err)
	}
	src.Close()
	first := gguf.ShardPath(prefix, 0, 3)
	ft, _, _ := recipes.ParseFileType("Q4_K_M")
	build := func(in *gguf.Model, out, only string) *Plan {
		t.Helper()
		cfg := Config{Selection: recipes.Options{FileType: ft}, Output: filepath.Join(dir, out), Split: &splitter.Limits{MaxTensors: 10}}
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
	in, err := gguf.Open(first)
	if err != nil {
		t.Fatal(err)
	}
	plan := build(in, "one", "")
	if err := Run(context.Background(), in, plan.Outputs, Options{}); err != nil {
		t.Fatal(err)
	}
	in.Close()
	// Output shards 1 and 2 hold tensors 1-20: input shard 1's.
	for _, o := range plan.Outputs[:2] {
		for _, tt := range o.Tensors {
			if tt.Source >= 20 {
				t.Fatalf("output %s has input tensor %d", o.Path, tt.Source)
			}
		}
	}
	poison(t, gguf.ShardPath(prefix, 1, 3))
	poison(t, gguf.ShardPath(prefix, 2, 3))
	in, err = gguf.Open(first)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	part := build(in, "part", "1-2")
	if err := Run(context.Background(), in, part.Outputs, Options{}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		want, _ := os.ReadFile(plan.Outputs[i].Path)
		got, err := os.ReadFile(part.Outputs[i].Path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (%v)", part.Outputs[i].Path, plan.Outputs[i].Path, err)
		}
	}
	for _, o := range part.Outputs[2:] {
		if _, err := os.Stat(o.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written (%v)", o.Path, err)
		}
	}
	// Shard 3 needs the poisoned input: it fails (on the NaN it reads).
	bad := build(in, "bad", "3")
	if err := Run(context.Background(), in, bad.Outputs, Options{}); err == nil {
		t.Error("writing shard 3 from the poisoned input succeeded")
	}
}
