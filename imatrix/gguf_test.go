package imatrix

import (
	"bytes"
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

// A matrix of a GGUF file that never saw data (count 0) has the mean 1, as
// mainline's llama-quantize takes it and as the .dat WriteDat makes of the
// file stores it, so quantizing with the GGUF file or with its .dat gives
// the same result; it used to be all zeros. Stats still report it as empty
// zero columns; a .dat entry without calls keeps its values (ik_llama.cpp).
func TestGGUFNoDataMeanIsOne(t *testing.T) {
	m := &Matrix{Format: FormatGGUF, Entries: []Entry{{Name: "blk.0.ffn_up_exps.weight", Sums: []float32{4, 8, 0, 0, 3, 6}, Counts: []float64{2, 0, 3}}}}
	path := filepath.Join(t.TempDir(), "im.gguf")
	if err := WriteGGUF(path, m, nil, 512, false); err != nil {
		t.Fatal(err)
	}
	whole, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	var buf bytes.Buffer
	if err := WriteDat(&buf, whole); err != nil {
		t.Fatal(err)
	}
	dat, err := ReadDat(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	merged, err := Merge(nil, 0, whole)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{2, 4, 1, 1, 1, 2}
	for name, im := range map[string]*Matrix{"GGUF": whole, "index": idx, "converted .dat": dat, "merged": merged} {
		e := &im.Entries[0]
		if got := e.Mean(); !slices.Equal(got, want) {
			t.Errorf("%s: means %v, want %v", name, got, want)
		}
	}
	st := whole.Entries[0].Stats(0)
	if !slices.Equal(st.Empty, []int{1}) || st.ZeroColumns != 2 || st.Min != 0 {
		t.Errorf("stats: empty %v, zero columns %d, min %v", st.Empty, st.ZeroColumns, st.Min)
	}
	// A .dat entry without calls: its values as stored.
	d := Entry{Name: "x", Sums: []float32{0, 5}, Counts: []float64{0}}
	if got := d.Mean(); !slices.Equal(got, []float32{0, 5}) {
		t.Errorf(".dat entry without calls: means %v", got)
	}
}
