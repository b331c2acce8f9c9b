package imatrix

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readWhole reads data as Open does.
func readWhole(data []byte) (*Matrix, error) {
	if len(data) >= 4 && string(data[:4]) == "GGUF" {
		return ReadGGUF(bytes.NewReader(data), int64(len(data)))
	}
	return ReadDat(bytes.NewReader(data), int64(len(data)))
}

// sameAsWhole fails unless reading data as an index gives what reading it
// whole gives: the same error, or the same entries with the same values
// and means, bit for bit.
func sameAsWhole(t *testing.T, data []byte) {
	t.Helper()
	whole, errW := readWhole(data)
	idx, errI := ReadIndex(bytes.NewReader(data), int64(len(data)))
	if (errW == nil) != (errI == nil) || errW != nil && errW.Error() != errI.Error() {
		t.Fatalf("whole: %v, index: %v", errW, errI)
	}
	if errW != nil {
		return
	}
	if idx.Format != whole.Format || idx.Chunks != whole.Chunks || len(idx.Entries) != len(whole.Entries) || idx.Len() != whole.Len() {
		t.Fatalf("index %v/%d/%d entries, whole %v/%d/%d", idx.Format, idx.Chunks, len(idx.Entries), whole.Format, whole.Chunks, len(whole.Entries))
	}
	for i, w := range whole.Entries {
		e := &idx.Entries[i]
		if e.Name != w.Name || e.Sums != nil || e.Values() != len(w.Sums) || len(e.Counts) != len(w.Counts) {
			t.Fatalf("entry %d: %q with %d values (Sums %v), whole %q with %d", i, e.Name, e.Values(), e.Sums != nil, w.Name, len(w.Sums))
		}
		got := make([]float32, e.Values())
		if err := e.ReadSums(0, got); err != nil {
			t.Fatal(err)
		}
		wm, im := w.Mean(), e.Mean()
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(w.Sums[j]) || math.Float32bits(wm[j]) != math.Float32bits(im[j]) {
				t.Fatalf("%s value %d: %v (mean %v), whole %v (%v)", e.Name, j, got[j], im[j], w.Sums[j], wm[j])
			}
		}
		// A part read alone is the same part of the whole.
		if n := e.Values(); n > 1 {
			part := make([]float32, n/2)
			if err := e.ReadMean(n-n/2, part); err != nil {
				t.Fatal(err)
			}
			for j := range part {
				if math.Float32bits(part[j]) != math.Float32bits(wm[n-n/2+j]) {
					t.Fatalf("%s mean %d read alone: %v, whole %v", e.Name, n-n/2+j, part[j], wm[n-n/2+j])
				}
			}
		}
	}
}

func indexSeeds(t testing.TB) [][]byte {
	dir := t.TempDir()
	g := &Matrix{Chunks: 3, Datasets: []string{"d"}, Entries: []Entry{
		{Name: "a.weight", Sums: []float32{1, 2, 3, 4}, Counts: []float64{2, 0}},
		{Name: "b.weight", Sums: []float32{5}, Counts: []float64{1}},
	}}
	path := filepath.Join(dir, "seed.gguf")
	if err := WriteGGUF(path, g, nil, 512, true); err != nil {
		t.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	badGGUF := &Matrix{Entries: []Entry{
		{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{1}},
		{Name: "b.weight", Sums: []float32{5, float32(math.Inf(1))}, Counts: []float64{-1}},
	}}
	if err := WriteGGUF(path, badGGUF, nil, 512, true); err != nil {
		t.Fatal(err)
	}
	bad, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]float32, 3000) // more than one chunk of streamDat
	for i := range big {
		big[i] = float32(i)
	}
	badBig := append([]float32(nil), big...)
	badBig[2500] = -1
	return append([][]byte{
		seed, seed[:40], bad,
		datBytes([]Entry{{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{2}}}, true),
		datBytes([]Entry{{Name: "a.weight", Sums: big, Counts: []float64{3}}, {Name: "b.weight", Sums: []float32{0, 1}, Counts: []float64{0}}}, false),
		// The invalid value of the second entry is reported, not the
		// truncation after it: Validate runs on a complete file only.
		datBytes([]Entry{{Name: "a.weight", Sums: []float32{1}, Counts: []float64{1}}, {Name: "b.weight", Sums: badBig, Counts: []float64{1}}}, false),
		datBytes([]Entry{{Name: "a.weight", Sums: badBig, Counts: []float64{1}}, {Name: "b.weight", Sums: []float32{float32(math.NaN())}, Counts: []float64{1}}}, true)[:12050],
		{1, 0, 0, 0},
	}, countSeeds()...)
}

func TestReadIndexSameAsWhole(t *testing.T) {
	for i, data := range indexSeeds(t) {
		t.Run("", func(t *testing.T) {
			sameAsWhole(t, data)
			if i == 5 {
				if _, err := ReadIndex(bytes.NewReader(data), int64(len(data))); err == nil || !bytes.Contains([]byte(err.Error()), []byte("value 2500 is negative")) {
					t.Errorf("error %v, want value 2500 of b.weight", err)
				}
			}
		})
	}
}

func TestOpenIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.dat")
	if err := os.WriteFile(path, indexSeeds(t)[4], 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, from, ok := m.Find("blk.0.ffn_gate.weight"); ok {
		t.Fatalf("found %s for an unknown tensor", from)
	}
	e, _, ok := m.Find("a.weight")
	if !ok || e.Values() != 3000 {
		t.Fatalf("a.weight: %v, %v", e, ok)
	}
	v := make([]float32, 2)
	if err := e.ReadMean(2998, v); err != nil || v[0] != 2998.0/3 || v[1] != 2999.0/3 {
		t.Fatalf("means %v, %v", v, err)
	}
	if err := e.ReadSums(2999, v); err == nil {
		t.Error("read past the entry's values")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.ReadSums(0, v); err == nil {
		t.Error("read after Close")
	}
	if _, err := OpenIndex(filepath.Join(t.TempDir(), "none.dat")); err == nil {
		t.Error("opened a missing file")
	}
}

func FuzzReadIndex(f *testing.F) {
	for _, s := range indexSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsWhole(t, data)
	})
}

// A NaN in an entry that --exclude-weights drops (or --include-weights
// leaves out) is no error, as for the reference, which checks the entries
// it keeps; OpenIndex, which keeps every entry, still refuses the file.
func TestOpenIndexFilteredChecksKeptEntries(t *testing.T) {
	m := &Matrix{Entries: []Entry{
		{Name: "blk.0.attn_q.weight", Sums: []float32{1, 2, 3, 4}, Counts: []float64{1}},
		{Name: "blk.1.attn_q.weight", Sums: []float32{1, float32(math.NaN()), 3, 4}, Counts: []float64{1}},
	}}
	var b bytes.Buffer
	if err := WriteDat(&b, m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nan.dat")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenIndex(path); err == nil || !strings.Contains(err.Error(), "blk.1.attn_q.weight: value 1 is NaN") {
		t.Errorf("OpenIndex: %v", err)
	}
	for _, tc := range []struct {
		include, exclude []string
		ok               bool
	}{
		{nil, []string{"blk.1"}, true},
		{[]string{"blk.0"}, nil, true},
		{[]string{"attn_q"}, nil, false},
		{nil, []string{"blk.0"}, false},
	} {
		got, loaded, err := OpenIndexFiltered(path, tc.include, tc.exclude)
		if tc.ok != (err == nil) {
			t.Errorf("include %v exclude %v: %v", tc.include, tc.exclude, err)
			continue
		}
		if err == nil {
			if loaded != 2 || got.Len() != 1 {
				t.Errorf("include %v exclude %v: loaded %d, kept %d; want 2 and 1", tc.include, tc.exclude, loaded, got.Len())
			}
			got.Close()
		}
	}
}
