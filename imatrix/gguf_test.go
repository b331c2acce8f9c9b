package imatrix

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

func TestGGUFRoundTrip(t *testing.T) {
	dat, err := Open(golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "im.gguf")
	nmat := map[string]int{}
	for _, e := range dat.Entries {
		if len(e.Sums) == 2048 {
			nmat[e.Name] = 8 // the expert tensors: 8 experts of 256 columns
		}
	}
	if err := WriteGGUF(path, dat, nmat, 512, true); err != nil {
		t.Fatal(err)
	}
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Format != FormatGGUF || g.Chunks != dat.Chunks || len(g.Datasets) != 1 || g.Datasets[0] != dat.Datasets[0] || g.Len() != dat.Len() {
		t.Fatalf("GGUF copy: format %s chunks %d datasets %q entries %d", g.Format, g.Chunks, g.Datasets, g.Len())
	}
	for _, e := range dat.Entries {
		ge, ok := g.Lookup(e.Name)
		if !ok {
			t.Fatalf("%s missing", e.Name)
		}
		a, b := e.Mean(), ge.Mean()
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s[%d]: mean %v after the round trip, %v before", e.Name, i, b[i], a[i])
			}
		}
	}
	if _, err := Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")); !errors.Is(err, ErrNotImatrix) {
		t.Errorf("a model read as an imatrix: %v", err)
	}
}

// A .dat matrix written as GGUF counts tokens, as llama-imatrix converts
// one: values and counts times the chunk size, the chunk count the largest
// call count. It used to keep the call counts, so in a merge with a GGUF
// file made by llama-imatrix (tokens) the converted file weighed 1/512 of
// what it should. A GGUF matrix keeps the chunk size it records.
func TestWriteGGUFChunkSize(t *testing.T) {
	dat := &Matrix{Format: FormatDat, Chunks: 3, Datasets: []string{"d"}, Entries: []Entry{
		{Name: "blk.0.attn_q.weight", Sums: []float32{3, 0.1}, Counts: []float64{10}},
		{Name: "blk.0.ffn_up_exps.weight", Sums: []float32{1, 2, 3, 4}, Counts: []float64{12}},
	}}
	for _, tc := range []struct {
		name      string
		m         *Matrix
		chunkSize int
		wantSize  int
		wantCount float64 // of blk.0.attn_q.weight
		wantSum   float32 // its first value
		chunks    int
	}{
		{"dat, default", dat, 512, 512, 10 * 512, 3 * 512, 12},
		{"dat, 4096", dat, 4096, 4096, 10 * 4096, 3 * 4096, 12},
		{"gguf keeps its chunk size", &Matrix{Format: FormatGGUF, Chunks: 7, ChunkSize: 2048, Entries: dat.Entries}, 512, 2048, 10, 3, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "im.gguf")
			if err := WriteGGUF(path, tc.m, map[string]int{"blk.0.ffn_up_exps.weight": 2}, tc.chunkSize, false); err != nil {
				t.Fatal(err)
			}
			g, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := g.Lookup("blk.0.attn_q.weight")
			if g.ChunkSize != tc.wantSize || g.Chunks != tc.chunks || e.Counts[0] != tc.wantCount || e.Sums[0] != tc.wantSum {
				t.Errorf("chunk size %d, chunks %d, counts %v, sums %v", g.ChunkSize, g.Chunks, e.Counts, e.Sums)
			}
			for _, name := range []string{"blk.0.attn_q.weight", "blk.0.ffn_up_exps.weight"} {
				a, _ := tc.m.Lookup(name)
				b, _ := g.Lookup(name)
				am, bm := a.Mean(), b.Mean()
				if !slices.Equal(am, bm) {
					t.Errorf("%s: means %v, want %v", name, bm, am)
				}
			}
		})
	}
}
