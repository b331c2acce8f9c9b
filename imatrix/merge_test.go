package imatrix

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// Merging .dat files gives what ik_llama.cpp's llama-imatrix --in-file
// writes (load_imatrix, then save_imatrix): values summed in float32 in
// input order, calls summed, each value stored as (sum / calls) * calls in
// float32, an entry without calls left out. It used to sum in float64 and
// store the sum, a last bit away from the reference's in about one value
// in ten, and to keep entries without data.
func TestMergeDatAsReference(t *testing.T) {
	m, _ := readGoldenDat(t, "tiny-ds2.imatrix.dat")
	other := &Matrix{Format: FormatDat, Chunks: 3, Datasets: []string{"b"}}
	for k, e := range m.Entries {
		sums := make([]float32, len(e.Sums))
		for i := range sums {
			sums[i] = float32(math.Pow(1.0007, float64(i*(k+1)%977))) * 0.3
		}
		other.Entries = append(other.Entries, Entry{Name: e.Name, Sums: sums, Counts: []float64{7}})
	}
	other.Entries = append(other.Entries, Entry{Name: "blk.9.unused.weight", Sums: []float32{0, 0}, Counts: []float64{0}})
	for _, in := range [][]*Matrix{{m, m}, {m, other}, {other, m, other}} {
		merged, err := Merge(nil, 0, in...)
		if err != nil {
			t.Fatal(err)
		}
		want := referenceDatMerge(in)
		if merged.Format != FormatDat || merged.Len() != len(want) {
			t.Fatalf("format %s, %d entries, want %d", merged.Format, merged.Len(), len(want))
		}
		for _, e := range merged.Entries {
			w := want[e.Name]
			if e.Counts[0] != float64(w.ncall) || !slices.Equal(e.Sums, w.values) {
				t.Fatalf("%s: calls %v, values differ from the reference's (%v... want %v...)", e.Name, e.Counts, e.Sums[:2], w.values[:2])
			}
		}
		if _, ok := merged.Lookup("blk.9.unused.weight"); ok || slices.Contains(in, other) != slices.Equal(merged.Dropped, []string{"blk.9.unused.weight"}) {
			t.Errorf("entry without calls: dropped %q", merged.Dropped)
		}
	}
}

type refStats struct {
	values []float32
	ncall  int32
}

// referenceDatMerge transliterates ik_llama.cpp's llama-imatrix loading
// .dat files (load_imatrix) and storing them (save_imatrix).
func referenceDatMerge(in []*Matrix) map[string]refStats {
	st := map[string]*refStats{}
	for _, m := range in {
		for _, e := range m.Entries {
			s := st[e.Name]
			if s == nil {
				s = &refStats{values: make([]float32, len(e.Sums))}
				st[e.Name] = s
			}
			for i, v := range e.Sums {
				s.values[i] += v
			}
			s.ncall += int32(e.Counts[0])
		}
	}
	out := map[string]refStats{}
	for name, s := range st {
		if s.ncall == 0 {
			continue // "has no data - skipping"
		}
		tmp := make([]float32, len(s.values))
		for i, v := range s.values {
			tmp[i] = float32(v/float32(s.ncall)) * float32(s.ncall)
		}
		out[name] = refStats{tmp, s.ncall}
	}
	return out
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
	b := &Matrix{Format: FormatGGUF, Chunks: 4, ChunkSize: 4, Datasets: []string{"b", "a"},
		Entries: []Entry{{Name: "x", Sums: []float32{2, 4, 0, 0}, Counts: []float64{2, 0}}, {Name: "only-b", Sums: []float32{5}, Counts: []float64{50}}}}
	for _, tc := range []struct {
		name     string
		in       []*Matrix
		counts   []float64
		means    []float32
		format   Format
		entries  []string
		datasets string
		chunks   int
	}{
		{"dat+dat", []*Matrix{a, dat(30, 3, 3, 3, 3)}, []float64{40}, []float32{13.0 / 40, 23.0 / 40, 33.0 / 40, 43.0 / 40}, FormatDat, []string{"x", "only-a"}, "a", 6},
		// A GGUF file counts tokens: the .dat's calls are 4 tokens each
		// (b's chunk size) and apply to each of its matrices; the second
		// matrix of b has no calls, so it keeps a's mean. The chunk count
		// is the largest count (50 tokens of only-b) over the chunk size.
		// The datasets are every input's, as mainline lists them.
		{"dat+gguf", []*Matrix{a, b}, []float64{42, 40}, []float32{42.0 / 42, 84.0 / 42, 120.0 / 40, 160.0 / 40}, FormatGGUF, []string{"x", "only-a", "only-b"}, "a|b|a", 12},
		{"gguf+dat", []*Matrix{b, a}, []float64{42, 40}, []float32{42.0 / 42, 84.0 / 42, 120.0 / 40, 160.0 / 40}, FormatGGUF, []string{"x", "only-b", "only-a"}, "b|a|a", 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(nil, 0, tc.in...)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := m.Lookup("x")
			if !slices.Equal(e.Counts, tc.counts) {
				t.Fatalf("counts %v, want %v", e.Counts, tc.counts)
			}
			equalMeans(t, "x", e.Mean(), tc.means)
			var names []string
			for _, e := range m.Entries {
				names = append(names, e.Name)
			}
			if strings.Join(names, " ") != strings.Join(tc.entries, " ") || m.Format != tc.format ||
				strings.Join(m.Datasets, "|") != tc.datasets || m.Chunks != tc.chunks {
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
	if _, err := Merge([]string{"a.dat", "b.dat"}, 0, a, b); err == nil || !strings.Contains(err.Error(), "b.dat") {
		t.Errorf("different sizes: %v", err)
	}
	if _, err := Merge([]string{"c.gguf", "d.gguf"}, 0, c, d); err == nil || !strings.Contains(err.Error(), "d.gguf") {
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
