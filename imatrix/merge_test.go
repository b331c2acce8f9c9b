package imatrix

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestMergeSelfKeepsMeans(t *testing.T) {
	m, _ := readGoldenDat(t, "tiny-ds2.imatrix.dat")
	merged, err := Merge(nil, m, m)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Chunks != 2*m.Chunks || len(merged.Datasets) != 1 || merged.Format != FormatDat || merged.Len() != m.Len() {
		t.Fatalf("chunks %d datasets %q format %s entries %d", merged.Chunks, merged.Datasets, merged.Format, merged.Len())
	}
	for _, e := range m.Entries {
		got, ok := merged.Lookup(e.Name)
		if !ok {
			t.Fatalf("%s lost", e.Name)
		}
		if got.Counts[0] != 2*e.Counts[0] {
			t.Errorf("%s: calls %v, want %v", e.Name, got.Counts, 2*e.Counts[0])
		}
		equalMeans(t, e.Name, got.Mean(), e.Mean())
	}
}

func equalMeans(t *testing.T, name string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s[%d]: mean %v, want %v", name, i, got[i], want[i])
		}
	}
}

func TestMergeCallWeighted(t *testing.T) {
	dat := func(count float64, sums ...float32) *Matrix {
		return &Matrix{Format: FormatDat, Chunks: 3, Datasets: []string{"a"},
			Entries: []Entry{{Name: "x", Sums: sums, Counts: []float64{count}}, {Name: "only-a", Sums: []float32{1}, Counts: []float64{1}}}}
	}
	a := dat(10, 10, 20, 30, 40)
	b := &Matrix{Format: FormatGGUF, Chunks: 4, Datasets: []string{"b", "a"},
		Entries: []Entry{{Name: "x", Sums: []float32{2, 4, 0, 0}, Counts: []float64{2, 0}}, {Name: "only-b", Sums: []float32{5}, Counts: []float64{5}}}}
	for _, tc := range []struct {
		name     string
		in       []*Matrix
		counts   []float64
		means    []float32
		format   Format
		entries  []string
		datasets string
	}{
		// (10+10)/(10+10) ... the same file twice
		{"dat+dat", []*Matrix{a, dat(30, 3, 3, 3, 3)}, []float64{40}, []float32{13.0 / 40, 23.0 / 40, 33.0 / 40, 43.0 / 40}, FormatDat, []string{"x", "only-a"}, "a"},
		// The .dat count applies to each of its matrices; the second
		// matrix of b has no calls, so it keeps a's mean.
		{"dat+gguf", []*Matrix{a, b}, []float64{12, 10}, []float32{12.0 / 12, 24.0 / 12, 30.0 / 10, 40.0 / 10}, FormatGGUF, []string{"x", "only-a", "only-b"}, "a|b"},
		{"gguf+dat", []*Matrix{b, a}, []float64{12, 10}, []float32{12.0 / 12, 24.0 / 12, 30.0 / 10, 40.0 / 10}, FormatGGUF, []string{"x", "only-b", "only-a"}, "b|a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(nil, tc.in...)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := m.Lookup("x")
			if len(e.Counts) != len(tc.counts) {
				t.Fatalf("counts %v, want %v", e.Counts, tc.counts)
			}
			for i := range tc.counts {
				if e.Counts[i] != tc.counts[i] {
					t.Fatalf("counts %v, want %v", e.Counts, tc.counts)
				}
			}
			equalMeans(t, "x", e.Mean(), tc.means)
			var names []string
			for _, e := range m.Entries {
				names = append(names, e.Name)
			}
			if strings.Join(names, " ") != strings.Join(tc.entries, " ") || m.Format != tc.format ||
				strings.Join(m.Datasets, "|") != tc.datasets || m.Chunks != 7 && m.Chunks != 6 {
				t.Errorf("entries %q format %s datasets %q chunks %d", names, m.Format, m.Datasets, m.Chunks)
			}
		})
	}
}

func TestMergeMismatch(t *testing.T) {
	a := &Matrix{Entries: []Entry{{Name: "x", Sums: []float32{1, 2}, Counts: []float64{1}}}}
	b := &Matrix{Entries: []Entry{{Name: "x", Sums: []float32{1, 2, 3}, Counts: []float64{1}}}}
	c := &Matrix{Entries: []Entry{{Name: "x", Sums: []float32{1, 2, 3, 4, 5, 6}, Counts: []float64{1, 1, 1}}}}
	d := &Matrix{Entries: []Entry{{Name: "x", Sums: []float32{1, 2, 3, 4, 5, 6}, Counts: []float64{1, 1}}}}
	if _, err := Merge([]string{"a.dat", "b.dat"}, a, b); err == nil || !strings.Contains(err.Error(), "b.dat") {
		t.Errorf("different sizes: %v", err)
	}
	if _, err := Merge([]string{"c.gguf", "d.gguf"}, c, d); err == nil || !strings.Contains(err.Error(), "d.gguf") {
		t.Errorf("different matrix counts: %v", err)
	}
}

// A GGUF matrix written as a .dat file is converted as llama-imatrix
// converts it (save_imatrix_legacy): token counts become calls (ceil of the
// largest count over the chunk size), each value (value/count)*calls in
// float32, a matrix without data a mean of 1, an entry without any data
// left out, entries in name order, the trailer's chunk count the largest
// count over the chunk size and its dataset the last one. It used to write
// a power of two near the token count as the call count, so a .dat made
// from a GGUF file weighed hundreds of times more than a real one in a
// merge (llama-imatrix --in-file or ours), and zeros for an expert
// without data.
func TestWriteDatFromGGUFAsReference(t *testing.T) {
	const per, nexp = 64, 7
	sums := make([]float32, per*nexp)
	counts := []float64{3 * 512, 1000 * 512, 0, 7 * 512, 999*512 + 1, 1, 12345}
	for i := range sums {
		if counts[i/per] != 0 {
			sums[i] = float32(math.Pow(1.37, float64(i%41))) * float32(counts[i/per]) / 3
		}
	}
	entries := []Entry{
		{Name: "blk.1.ffn_up_exps.weight", Sums: sums, Counts: counts},
		{Name: "blk.0.attn_q.weight", Sums: []float32{3, 0.1, 7e-3}, Counts: []float64{2560}},
		{Name: "blk.0.attn_k.weight", Sums: []float32{0, 0}, Counts: []float64{0}}, // no data: left out
	}
	for _, cs := range []int{0, 512, 4096} {
		m := &Matrix{Format: FormatGGUF, Entries: entries, Chunks: 5, ChunkSize: cs, Datasets: []string{"a", "b"}}
		var buf bytes.Buffer
		if err := WriteDat(&buf, m); err != nil {
			t.Fatal(err)
		}
		want := referenceLegacy(m.Entries, cs, m.Datasets)
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("chunk size %d: the .dat differs from the reference's conversion", cs)
		}
		if got := DatSkipped(m); len(got) != 1 || got[0] != "blk.0.attn_k.weight" {
			t.Errorf("DatSkipped = %q", got)
		}
		back, err := ReadDat(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if back.Len() != 2 || back.Datasets[0] != "b" {
			t.Errorf("chunk size %d: %d entries, datasets %q", cs, back.Len(), back.Datasets)
		}
	}
}

// referenceLegacy transliterates llama-imatrix's save_imatrix_legacy for a
// matrix loaded from GGUF files (chunk size cs, 512 by default).
func referenceLegacy(entries []Entry, cs int, datasets []string) []byte {
	if cs == 0 {
		cs = 512
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	var names []string
	byName := map[string]Entry{}
	var maxCount int64
	for _, e := range entries {
		n0 := 0
		for _, c := range e.Counts {
			maxCount = max(maxCount, int64(math.Round(c)))
			if c == 0 {
				n0++
			}
		}
		if n0 == len(e.Counts) {
			continue
		}
		names = append(names, e.Name)
		byName[e.Name] = e
	}
	slices.Sort(names)
	binary.Write(&b, le, int32(len(names)))
	for _, name := range names {
		e := byName[name]
		binary.Write(&b, le, int32(len(name)))
		b.WriteString(name)
		var top int64
		for _, c := range e.Counts {
			top = max(top, int64(math.Round(c)))
		}
		ncall := int32((top + int64(cs) - 1) / int64(cs))
		binary.Write(&b, le, ncall)
		nval, nmat := len(e.Sums), len(e.Counts)
		binary.Write(&b, le, int32(nval))
		for i := 0; i < nval; i++ {
			count := float32(int64(math.Round(e.Counts[i/(nval/nmat)])))
			value := e.Sums[i]
			if count == 0 {
				value, count = 1, 1
			}
			binary.Write(&b, le, float32(value/count)*float32(ncall))
		}
	}
	binary.Write(&b, le, int32(maxCount/int64(cs)))
	ds := datasets[len(datasets)-1]
	binary.Write(&b, le, int32(len(ds)))
	b.WriteString(ds)
	return b.Bytes()
}
