package imatrix

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
)

func TestCheck(t *testing.T) {
	m := &Matrix{Entries: []Entry{
		{Name: "blk.0.attn_kv_b.weight", Sums: []float32{1, 2}, Counts: []float64{1}},
		{Name: "blk.0.ffn_up.weight", Sums: []float32{1, 2}, Counts: []float64{1}},
		{Name: "blk.0.ffn_down.weight", Sums: []float32{1, 2, 3}, Counts: []float64{1}},
		{Name: "blk.0.ffn_up_exps.weight", Sums: []float32{1, 2, 0, 0, 5, 6}, Counts: []float64{1}},
		{Name: "blk.0.attn_q.weight", Sums: []float32{0, 0}, Counts: []float64{1}},
		{Name: "blk.9.unused.weight", Sums: []float32{1}, Counts: []float64{1}},
	}}
	plan := []PlannedTensor{
		{Name: "token_embd.weight", Shape: []int64{2, 10}, Type: formats.Q4_K, Quantize: true},
		{Name: "blk.0.attn_norm.weight", Shape: []int64{2}, Type: formats.F32},
		{Name: "blk.0.attn_q.weight", Shape: []int64{2, 2}, Type: formats.Q4_K, Quantize: true},
		{Name: "blk.0.attn_kv_b.weight", Shape: []int64{2, 4}, Type: formats.Q8_0, Quantize: true},
		{Name: "blk.0.attn_k_b.weight", Shape: []int64{1, 2, 2}, Type: formats.IQ2_XS, Quantize: true, NeedsImatrix: true},
		{Name: "blk.0.attn_v_b.weight", Shape: []int64{2, 1, 2}, Type: formats.IQ4_KS, Quantize: true},
		{Name: "blk.0.ffn_gate.weight", Shape: []int64{2, 4}, Type: formats.Q4_K, Quantize: true},
		{Name: "blk.0.ffn_down.weight", Shape: []int64{4, 2}, Type: formats.Q6_K, Quantize: true},
		{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{2, 4, 3}, Type: formats.IQ3_K, Quantize: true},
		{Name: "blk.0.ffn_down_exps.weight", Shape: []int64{4, 2, 3}, Type: formats.Q5_K, Quantize: true},
	}
	r := Check(m, plan)
	got := map[string]string{}
	for _, f := range r.Findings {
		key := f.Tensor
		if key == "" {
			key = f.Entry
		}
		got[key] += f.Severity.String() + " " + f.Kind + ";"
	}
	want := map[string]string{
		"token_embd.weight":          "info not-needed;",
		"blk.0.attn_q.weight":        "warning all-zero;",
		"blk.0.attn_k_b.weight":      "error refused;",
		"blk.0.attn_v_b.weight":      "info mla;",
		"blk.0.ffn_gate.weight":      "info borrowed-data;",
		"blk.0.ffn_down.weight":      "error size;",
		"blk.0.ffn_up_exps.weight":   "warning empty-matrix;",
		"blk.0.ffn_down_exps.weight": "warning no-data;",
		"blk.9.unused.weight":        "info unused-entry;",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if want[k] == "" {
			t.Errorf("unexpected finding %s: %s", k, v)
		}
	}
	if !r.Failed() || r.Count(Error) != 2 || r.Tensors != 9 || r.WithData != 5 {
		t.Errorf("failed %v errors %d tensors %d with data %d", r.Failed(), r.Count(Error), r.Tensors, r.WithData)
	}
	for _, f := range r.Findings {
		if f.Kind == KindEmpty && (len(f.Matrices) != 1 || f.Matrices[0] != 1 || f.Of != 3 || !strings.Contains(f.Message, "expert 1 of 3 has no data")) {
			t.Errorf("empty-matrix finding %+v", f)
		}
	}
}

func TestNoDataText(t *testing.T) {
	for _, tc := range []struct {
		name  string
		empty []int
		of    int
		want  string
	}{
		{"blk.1.ffn_up_exps.weight", []int{5}, 8, "expert 5 of 8 has no data"},
		{"blk.1.ffn_up_exps.weight", []int{3, 5}, 8, "experts 3 and 5 of 8 have no data"},
		{"blk.1.ffn_up_exps.weight", []int{0, 3, 5}, 384, "experts 0, 3 and 5 of 384 have no data"},
		{"blk.1.attn_k_b.weight", []int{2}, 16, "head 2 of 16 has no data"},
		{"blk.1.attn_k_b.weight", []int{1, 2}, 16, "heads 1 and 2 of 16 have no data"},
	} {
		if got := NoDataText(tc.name, tc.empty, tc.of); got != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.name, tc.empty, got, tc.want)
		}
	}
}

// Broken files: every reader error names the file and says what is wrong.
func TestOpenBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := datBytes([]Entry{{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{2}}}, true)
	imGGUF := filepath.Join(dir, "ok.gguf")
	if err := WriteGGUF(imGGUF, &Matrix{Entries: []Entry{{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{2}}}}, nil, 512, true); err != nil {
		t.Fatal(err)
	}
	ggufRaw, err := os.ReadFile(imGGUF)
	if err != nil {
		t.Fatal(err)
	}
	nanGGUF := filepath.Join(dir, "nan-src.gguf")
	if err := WriteGGUF(nanGGUF, &Matrix{Entries: []Entry{{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{-1}}}}, nil, 512, true); err != nil {
		t.Fatal(err)
	}
	negRaw, _ := os.ReadFile(nanGGUF)
	for _, tc := range []struct {
		name string
		data []byte
		path string // an existing file instead of data
		want string
		is   error
	}{
		{name: "truncated.dat", data: good[:len(good)-9], want: "reading", is: ErrFormat},
		{name: "nan.dat", data: datBytes([]Entry{{Name: "a.weight", Sums: []float32{float32(nanValue())}, Counts: []float64{1}}}, false), want: "NaN"},
		{name: "negative.dat", data: datBytes([]Entry{{Name: "a.weight", Sums: []float32{1}, Counts: []float64{-3}}}, false), want: "negative call count"},
		{name: "truncated.gguf", data: ggufRaw[:len(ggufRaw)-34]},
		{name: "negative.gguf", data: negRaw, want: "call count"},
		{name: "model.gguf", path: golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"), want: "deepseek2 model", is: ErrNotImatrix},
	} {
		path := tc.path
		if path == "" {
			path = filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Open(path)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: error %q does not name the file, say %q or wrap %v", tc.name, err, tc.want, tc.is)
		}
	}
}

func nanValue() float64 { var z float64; return z / z }

func FuzzReadGGUF(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.gguf")
	m := &Matrix{Chunks: 3, Datasets: []string{"d"}, Entries: []Entry{
		{Name: "a.weight", Sums: []float32{1, 2, 3, 4}, Counts: []float64{2, 0}},
		{Name: "b.weight", Sums: []float32{5}, Counts: []float64{1}},
	}}
	if err := WriteGGUF(path, m, nil, 512, true); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:40])
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadGGUF(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, e := range m.Entries {
			e.Mean()
			e.Stats(0)
		}
		var buf bytes.Buffer
		if err := WriteDat(&buf, m); err != nil {
			return // counts too large for a .dat: refused, fine
		}
		if _, err := ReadDat(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
			t.Fatalf("re-read of the .dat written from it: %v", err)
		}
	})
}

// An expert of a GGUF file without calls is quantized with importance 1
// (Mean): check says so, not "all-zero importance".
func TestCheckGGUFEmptyExpertIsUniform(t *testing.T) {
	plan := []PlannedTensor{{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{2, 4, 3}, Type: formats.Q4_K, Quantize: true}}
	for _, tc := range []struct {
		name string
		m    *Matrix
		want string
	}{
		{"gguf", &Matrix{Format: FormatGGUF, Entries: []Entry{{Name: "blk.0.ffn_up_exps.weight", Sums: []float32{1, 2, 0, 0, 5, 6}, Counts: []float64{1, 0, 2}, tokens: true}}},
			"with uniform importance there"},
		{"dat", &Matrix{Format: FormatDat, Entries: []Entry{{Name: "blk.0.ffn_up_exps.weight", Sums: []float32{1, 2, 0, 0, 5, 6}, Counts: []float64{1}}}},
			""},
	} {
		r := Check(tc.m, plan)
		gguf := "a GGUF file's matrix without calls counts as 1s"
		if len(r.Findings) != 1 || r.Findings[0].Kind != KindEmpty || !strings.Contains(r.Findings[0].Message, tc.want) ||
			strings.Contains(r.Findings[0].Message, gguf) != (tc.want != "") {
			t.Errorf("%s: %+v, want %q", tc.name, r.Findings, tc.want)
		}
	}
}
