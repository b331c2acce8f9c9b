package pipeline

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
)

// TensorImportance finds and adapts importance data as llama-quantize does,
// and never changes the matrix it reads.
func TestTensorImportance(t *testing.T) {
	m := &imatrix.Matrix{Entries: []imatrix.Entry{
		{Name: "token_embd.weight", Sums: []float32{1, 2}, Counts: []float64{1}},
		{Name: "blk.0.attn_q.weight", Sums: []float32{2, 4, 6, 8}, Counts: []float64{2}},
		{Name: "blk.0.attn_kv_b.weight", Sums: []float32{1, 3}, Counts: []float64{1}},
		{Name: "blk.0.ffn_up_exps.weight", Sums: []float32{1, 1, 0, 0}, Counts: []float64{1, 4}},
	}}
	before := slices.Clone(m.Entries[3].Sums)
	// The same from an index of the matrix written as a GGUF file.
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := imatrix.WriteGGUF(path, m, nil, 512, true); err != nil {
		t.Fatal(err)
	}
	idx, err := imatrix.OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	for _, tc := range []struct {
		name    string
		tensor  gguf.TensorInfo
		typ     formats.Type
		data    []float32
		from    string
		counts  []float64
		note    string // substring of Note
		ignored string
		err     string
	}{
		{name: "plain mean", tensor: gguf.TensorInfo{Name: "blk.0.attn_q.weight", Shape: []int64{4, 8}}, typ: formats.Q4_K,
			data: []float32{1, 2, 3, 4}, from: "blk.0.attn_q.weight"},
		{name: "none", tensor: gguf.TensorInfo{Name: "blk.0.attn_k.weight", Shape: []int64{4, 8}}, typ: formats.Q4_K},
		{name: "token_embd of another size is ignored", tensor: gguf.TensorInfo{Name: "token_embd.weight", Shape: []int64{4, 8}}, typ: formats.Q4_K,
			ignored: "imatrix size 2 is different from tensor size 4"},
		{name: "any other tensor of another size is an error", tensor: gguf.TensorInfo{Name: "blk.0.attn_q.weight", Shape: []int64{8, 8}}, typ: formats.Q4_K,
			err: "importance matrix entry blk.0.attn_q.weight has 4 values, the tensor needs 8"},
		{name: "attn_v_b takes attn_kv_b's vector for each head", tensor: gguf.TensorInfo{Name: "blk.0.attn_v_b.weight", Shape: []int64{2, 4, 3}}, typ: formats.Q8_0,
			data: []float32{1, 3, 1, 3, 1, 3}, from: "blk.0.attn_kv_b.weight", note: "used for each of its 3 heads"},
		{name: "experts: per-matrix counts", tensor: gguf.TensorInfo{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{2, 4, 2}}, typ: formats.Q8_0,
			data: []float32{1, 1, 0, 0}, from: "blk.0.ffn_up_exps.weight", counts: []float64{1, 4}},
		{name: "an expert without data is uniform where the type fails on zeros", tensor: gguf.TensorInfo{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{2, 4, 2}}, typ: formats.IQ2_XXS,
			data: []float32{1, 1, 1, 1}, from: "blk.0.ffn_up_exps.weight", counts: []float64{1, 4}, note: "1 slice(s) without importance data (matrices [1])"},
	} {
		for _, src := range []*imatrix.Matrix{m, idx} {
			t.Run(tc.name, func(t *testing.T) {
				imp, err := TensorImportance(src, tc.tensor, tc.typ)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("error %v, want one with %q", err, tc.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(imp.Data, tc.data) || imp.From != tc.from || !slices.Equal(imp.Counts, tc.counts) || imp.Ignored != tc.ignored ||
					!strings.Contains(imp.Note, tc.note) || (tc.note == "") != (imp.Note == "") {
					t.Fatalf("got %+v, want data %v from %q counts %v note %q ignored %q", imp, tc.data, tc.from, tc.counts, tc.note, tc.ignored)
				}
			})
		}
	}
	if !slices.Equal(m.Entries[3].Sums, before) {
		t.Fatalf("the matrix changed: %v, was %v", m.Entries[3].Sums, before)
	}
	if imp, err := TensorImportance(nil, gguf.TensorInfo{Name: "x", Shape: []int64{4}}, formats.Q4_0); err != nil || imp.Data != nil {
		t.Fatalf("nil matrix: %+v, %v", imp, err)
	}
}

// importanceData is tp.ImportanceData, failing t on an error.
func importanceData(t *testing.T, tp Tensor) []float32 {
	t.Helper()
	data, err := tp.ImportanceData()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
