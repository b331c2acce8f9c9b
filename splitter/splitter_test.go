package splitter

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// goldenSplits are the llama-gguf-split runs in golden/e2e/COMMANDS.md.
var goldenSplits = []struct {
	name    string
	in      string // relative to golden/e2e
	limits  Limits
	prefix  string // reference output prefix, relative to golden/e2e
	tensors []int  // tensors per shard
}{
	{"max-tensors-40", "tiny-ds2-bf16.gguf", Limits{MaxTensors: 40}, "split/tiny-ds2-bf16", []int{40, 34}},
	{"max-size-2M", "out-recipe.gguf", Limits{MaxBytes: 2_000_000}, "split/out-recipe", []int{29, 29, 16}},
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
		at := 0
		for at < min(len(g), len(w)) && g[at] == w[at] {
			at++
		}
		t.Errorf("%s differs from %s: %d bytes vs %d, first difference at byte %d", got, want, len(g), len(w), at)
	}
}

func TestSplitGolden(t *testing.T) {
	for _, tc := range goldenSplits {
		t.Run(tc.name, func(t *testing.T) {
			in, err := gguf.Open(golden.Path(t, "e2e", tc.in))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			prefix := filepath.Join(t.TempDir(), "out")
			plan, err := Split(in, prefix, tc.limits, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Shards) != len(tc.tensors) {
				t.Fatalf("%d shards, want %d", len(plan.Shards), len(tc.tensors))
			}
			for s, sh := range plan.Shards {
				if len(sh.Tensors) != tc.tensors[s] {
					t.Errorf("shard %d: %d tensors, want %d", s+1, len(sh.Tensors), tc.tensors[s])
				}
				got := gguf.ShardPath(prefix, s, len(plan.Shards))
				want := gguf.ShardPath(golden.Path(t, "e2e", tc.prefix), s, len(plan.Shards))
				sameBytes(t, got, want)
				if st, err := os.Stat(got); err != nil || st.Size() != sh.FileSize {
					t.Errorf("shard %d: planned %d bytes, file %v (%v)", s+1, sh.FileSize, st.Size(), err)
				}
			}
			if len(plan.Warnings) != 0 {
				t.Errorf("warnings: %q", plan.Warnings)
			}
		})
	}
}

func TestMergeGolden(t *testing.T) {
	for _, tc := range goldenSplits {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.tensors)
			// Any shard finds the others: start from the last one.
			shard := gguf.ShardPath(golden.Path(t, "e2e", tc.prefix), n-1, n)
			out := filepath.Join(t.TempDir(), "merged.gguf")
			if err := Merge(shard, out, nil); err != nil {
				t.Fatal(err)
			}
			sameBytes(t, out, golden.Path(t, "e2e", tc.in))
		})
	}
}

// TestMergeKeepSplit merges the shards llama-quantize --keep-split wrote;
// the result must hold the same tensors as the unsplit quantization.
func TestMergeKeepSplit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "merged.gguf")
	if err := Merge(golden.Path(t, "e2e", "split", "out-iq4_ks-00001-of-00002.gguf"), out, nil); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, kv := range m.Metadata {
		if IsSplitKey(kv.Key) {
			t.Errorf("merged file keeps %s", kv.Key)
		}
	}
	if len(m.Tensors) != 74 {
		t.Errorf("%d tensors, want 74", len(m.Tensors))
	}
}

func testTensors(sizes ...int64) []gguf.TensorInfo {
	ts := make([]gguf.TensorInfo, len(sizes))
	for i, n := range sizes {
		// f32 rows of n/4 weights: n bytes.
		ts[i] = gguf.TensorInfo{Name: "t" + strings.Repeat("x", i), Shape: []int64{n / 4}, Type: formats.F32}
	}
	return ts
}

func TestPlanShards(t *testing.T) {
	md := gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("test")}}
	for _, tc := range []struct {
		name     string
		sizes    []int64
		limits   Limits
		want     []int // tensors per shard
		warnings int
	}{
		{"default 128", make128(300), Limits{}, []int{128, 128, 44}, 0},
		{"tensors exact", []int64{32, 32, 32, 32}, Limits{MaxTensors: 2}, []int{2, 2}, 0},
		{"tensors one shard", []int64{32, 32}, Limits{MaxTensors: 5}, []int{2}, 0},
		{"metadata first", []int64{32, 32, 32}, Limits{MaxTensors: 2, MetadataOnlyFirst: true}, []int{0, 2, 1}, 0},
		{"metadata first no tensors", nil, Limits{MetadataOnlyFirst: true}, []int{0}, 0},
		// 36 bytes pad to 64: the limit counts padded sizes.
		{"bytes padded", []int64{36, 36, 36}, Limits{MaxBytes: 128}, []int{2, 1}, 0},
		{"bytes exact fit", []int64{64, 64, 64}, Limits{MaxBytes: 128}, []int{2, 1}, 0},
		{"bytes oversized first", []int64{400, 32, 32}, Limits{MaxBytes: 128}, []int{1, 2}, 1},
		{"bytes oversized middle", []int64{32, 400, 32}, Limits{MaxBytes: 128}, []int{1, 1, 1}, 1},
		{"bytes and tensors", []int64{32, 32, 32, 32, 200}, Limits{MaxBytes: 256, MaxTensors: 3}, []int{3, 2}, 0},
		{"too many shards", make128(65), Limits{MaxTensors: 1}, ones(65), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tensors := testTensors(tc.sizes...)
			plan, err := PlanShards(md, tensors, tc.limits)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			next := 0
			for s, sh := range plan.Shards {
				got = append(got, len(sh.Tensors))
				for j, src := range sh.Source {
					if src != next || sh.Tensors[j].Name != tensors[src].Name {
						t.Fatalf("shard %d tensor %d is source %d, want %d", s, j, src, next)
					}
					next++
				}
				if s > 0 && len(sh.Metadata) != 3 {
					t.Errorf("shard %d has %d keys, want the 3 split keys", s, len(sh.Metadata))
				}
				if no, _ := sh.Metadata.Uint(gguf.KeySplitNo); no != uint64(s) {
					t.Errorf("shard %d: split.no %d", s, no)
				}
				if c, _ := sh.Metadata.Uint(gguf.KeySplitCount); c != uint64(len(plan.Shards)) {
					t.Errorf("shard %d: split.count %d", s, c)
				}
			}
			if !equalInts(got, tc.want) {
				t.Errorf("tensors per shard %v, want %v", got, tc.want)
			}
			if len(plan.Warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", plan.Warnings, tc.warnings)
			}
		})
	}
}

func make128(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = 32
	}
	return s
}

func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

func equalInts(a, b []int) bool {
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

func TestPlanErrors(t *testing.T) {
	tensors := testTensors(32, 32)
	if _, err := PlanShards(nil, tensors, Limits{MaxTensors: -1}); !errors.Is(err, ErrLimits) {
		t.Errorf("negative limit: %v", err)
	}
	if _, err := PlanAssigned(nil, tensors, []int{0, 2}); !errors.Is(err, ErrLimits) {
		t.Errorf("empty shard 2: %v", err)
	}
	if _, err := PlanAssigned(nil, tensors, []int{0}); !errors.Is(err, ErrLimits) {
		t.Errorf("short assignment: %v", err)
	}
	bad := testTensors(32)
	bad[0].Size = 8
	if _, err := PlanShards(nil, bad, Limits{}); err == nil || !strings.Contains(err.Error(), `"t"`) {
		t.Errorf("wrong Size: %v", err)
	}
}

// TestPlanAssignedKeepSplit: the layout llama-quantize --keep-split writes,
// checked against its output.
func TestPlanAssignedKeepSplit(t *testing.T) {
	in, err := gguf.Open(golden.Path(t, "e2e", "split", "out-iq4_ks-00001-of-00002.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	infos := make([]gguf.TensorInfo, len(in.Tensors))
	shardOf := make([]int, len(in.Tensors))
	for i, tn := range in.Tensors {
		infos[i], shardOf[i] = tn.TensorInfo, tn.Shard
	}
	plan, err := PlanAssigned(in.Metadata, infos, shardOf)
	if err != nil {
		t.Fatal(err)
	}
	for s, sh := range plan.Shards {
		file := in.Shards[s]
		if sh.FileSize != file.Size {
			t.Errorf("shard %d: planned %d bytes, file has %d", s+1, sh.FileSize, file.Size)
		}
		if len(sh.Metadata) != len(file.Metadata) {
			t.Fatalf("shard %d: %d keys, file has %d", s+1, len(sh.Metadata), len(file.Metadata))
		}
		for k, kv := range sh.Metadata {
			if kv.Key != file.Metadata[k].Key || !kv.Value.Equal(file.Metadata[k].Value) {
				t.Errorf("shard %d key %d: %s=%s, file has %s=%s", s+1, k, kv.Key, kv.Value, file.Metadata[k].Key, file.Metadata[k].Value)
			}
		}
		for j, ti := range sh.Tensors {
			if ti.Offset != file.Tensors[j].Offset || ti.Name != file.Tensors[j].Name {
				t.Errorf("shard %d tensor %d: %s at %d, file has %s at %d", s+1, j, ti.Name, ti.Offset, file.Tensors[j].Name, file.Tensors[j].Offset)
			}
		}
	}
}

// TestCopyPaths: rewriting a file with its own header puts every tensor at
// the same offset, so every copy takes the kernel path (copy_file_range);
// splitting takes the buffered path for most tensors. Both must give the
// same bytes.
func TestCopyPaths(t *testing.T) {
	src := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	in, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	infos := make([]gguf.TensorInfo, len(in.Tensors))
	aligned := 0
	for i, tn := range in.Tensors {
		infos[i] = tn.TensorInfo
		_, off := in.TensorFile(i)
		if off%pageSize == (in.Shards[0].DataOffset+tn.Offset)%pageSize {
			aligned++
		}
	}
	if aligned != len(infos) {
		t.Fatalf("%d of %d tensors take the kernel path", aligned, len(infos))
	}
	out := filepath.Join(t.TempDir(), "same.gguf")
	var buf []byte
	if err := writeFile(context.Background(), out, in.Metadata, infos, in.TensorFile, &buf); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, out, src)
}
