package imatrix

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

func readGoldenDat(t *testing.T, name string) (*Matrix, []byte) {
	t.Helper()
	raw := golden.ReadFile(t, "e2e", name)
	m, err := ReadDat(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m, raw
}

func TestReadDatGolden(t *testing.T) {
	m, raw := readGoldenDat(t, "tiny-ds2.imatrix.dat")
	if len(m.Entries) != 50 || m.Chunks != 100 || len(m.Datasets) != 1 || m.Datasets[0] != "synthetic-calibration.txt" {
		t.Fatalf("entries %d chunks %d datasets %q", len(m.Entries), m.Chunks, m.Datasets)
	}
	e, ok := m.Lookup("blk.1.ffn_up_exps.weight")
	if !ok || len(e.Sums) != 2048 || e.Counts[0] != 100 {
		t.Fatalf("blk.1.ffn_up_exps.weight: %v %d", ok, len(e.Sums))
	}
	// Expert 5 of 8 (256 columns each) has no data in this file.
	mean := e.Mean()
	for i := 5 * 256; i < 6*256; i++ {
		if mean[i] != 0 {
			t.Fatalf("expert 5 column %d = %v, want 0", i-5*256, mean[i])
		}
	}
	if mean[0] != e.Sums[0]/100 {
		t.Errorf("mean %v, sums %v", mean[0], e.Sums[0])
	}
	var buf bytes.Buffer
	if err := WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), raw) {
		t.Errorf("round trip of the golden .dat differs (%d vs %d bytes)", buf.Len(), len(raw))
	}
}

func TestFindFallbacks(t *testing.T) {
	m := &Matrix{Entries: []Entry{
		{Name: "blk.0.ffn_up.weight", Sums: []float32{1}, Counts: []float64{1}},
		{Name: "blk.1.ffn_gate_up_exps.weight", Sums: []float32{2}, Counts: []float64{1}},
		{Name: "blk.2.ffn_up_exps.weight", Sums: []float32{3}, Counts: []float64{1}},
		{Name: "blk.3.attn_kv_b.weight", Sums: []float32{4}, Counts: []float64{1}},
		{Name: "blk.4.attn_v_b.weight", Sums: []float32{5}, Counts: []float64{1}},
	}}
	for _, tc := range []struct{ name, from string }{
		{"blk.0.ffn_gate.weight", "blk.0.ffn_up.weight"},
		{"blk.1.ffn_gate_exps.weight", "blk.1.ffn_gate_up_exps.weight"},
		{"blk.1.ffn_up_exps.weight", "blk.1.ffn_gate_up_exps.weight"},
		{"blk.2.ffn_gate_exps.weight", "blk.2.ffn_up_exps.weight"},
		{"blk.2.ffn_gate_up_exps.weight", "blk.2.ffn_up_exps.weight"},
		{"blk.3.attn_v_b.weight", "blk.3.attn_kv_b.weight"},
		{"blk.4.attn_kv_b.weight", "blk.4.attn_v_b.weight"},
		{"blk.3.attn_k_b.weight", ""},
		{"token_embd.weight", ""},
	} {
		_, from, ok := m.Find(tc.name)
		if from != tc.from || ok != (tc.from != "") {
			t.Errorf("Find(%s) = %q, %v; want %q", tc.name, from, ok, tc.from)
		}
	}
}

func datBytes(entries []Entry, trailer bool) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&b, le, int32(len(entries)))
	for _, e := range entries {
		binary.Write(&b, le, int32(len(e.Name)))
		b.WriteString(e.Name)
		binary.Write(&b, le, int32(e.Counts[0]))
		binary.Write(&b, le, int32(len(e.Sums)))
		binary.Write(&b, le, e.Sums)
	}
	if trailer {
		binary.Write(&b, le, int32(7))
		binary.Write(&b, le, int32(3))
		b.WriteString("abc")
	}
	return b.Bytes()
}

func TestReadDatBad(t *testing.T) {
	good := datBytes([]Entry{{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{2}}}, true)
	huge := append([]byte{}, good...)
	binary.LittleEndian.PutUint32(huge[4:], 1<<30) // name length
	nan := datBytes([]Entry{{Name: "a.weight", Sums: []float32{float32(math.NaN())}, Counts: []float64{1}}}, false)
	neg := datBytes([]Entry{{Name: "a.weight", Sums: []float32{1}, Counts: []float64{-3}}}, false)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"zero entries", []byte{0, 0, 0, 0}},
		{"truncated", good[:len(good)-10]},
		{"truncated trailer", good[:len(good)-2]},
		{"huge name", huge},
		{"nan", nan},
		{"negative count", neg},
		{"absurd entry count", []byte{0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4}},
	} {
		_, err := ReadDat(bytes.NewReader(tc.data), int64(len(tc.data)))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	m, err := ReadDat(bytes.NewReader(good), int64(len(good)))
	if err != nil || m.Chunks != 7 || m.Datasets[0] != "abc" || m.Entries[0].Mean()[1] != 1 {
		t.Fatalf("good file: %v %+v", err, m)
	}
	if _, err := ReadDat(bytes.NewReader(good[:3]), 3); !errors.Is(err, ErrFormat) {
		t.Errorf("short file error %v does not wrap ErrFormat", err)
	}
}

func TestWriteDatPerExpertCounts(t *testing.T) {
	// Two experts of 2 columns with different counts; one with none.
	m := &Matrix{Entries: []Entry{{Name: "x", Sums: []float32{4, 8, 0, 0, 30, 60}, Counts: []float64{2, 0, 10}}}, Chunks: 3}
	var buf bytes.Buffer
	if err := WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadDat(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	got := back.Entries[0].Mean()
	want := []float32{2, 4, 0, 0, 3, 6}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("means %v, want %v", got, want)
		}
	}
}

func FuzzReadDat(f *testing.F) {
	f.Add(datBytes([]Entry{{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{2}}}, true))
	f.Add([]byte{1, 0, 0, 0})
	for _, b := range countSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadDat(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteDat(&buf, m); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadDat(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
			t.Fatalf("re-read of written file: %v", err)
		}
	})
}

// A name or dataset name with a NUL byte ends there, as the reference reads
// them (C strings made of the bytes): the entry then names its tensor.
func TestReadDatNameNUL(t *testing.T) {
	m := &Matrix{Entries: []Entry{{Name: "blk.0.attn_q.weight\x00junk", Sums: []float32{1, 2}, Counts: []float64{1}}},
		Datasets: []string{"abc\x00def"}}
	var b bytes.Buffer
	if err := WriteDat(&b, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDat(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Entries[0].Name != "blk.0.attn_q.weight" || len(got.Datasets) != 1 || got.Datasets[0] != "abc" {
		t.Errorf("name %q, datasets %q", got.Entries[0].Name, got.Datasets)
	}
}

// What a .dat or GGUF file cannot hold is refused, naming the entry, and
// leaves no file: a GGUF token count beyond int32 calls (it wrapped to a
// negative count, and the entry was then left out as empty), a file whose
// every entry is left out (a .dat of zero entries, which every reader
// refuses), a chunk count beyond int32 (a merge's sum; it wrapped), and a
// tensor name llama.cpp cannot read (64 bytes or more).
func TestWriteRefusesUnrepresentable(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *Matrix
		want string
	}{
		{"huge token count", &Matrix{Format: FormatGGUF, Entries: []Entry{{Name: "x.weight", Sums: []float32{1, 2}, Counts: []float64{1e30}}}},
			"entry x.weight: count 1e+30"},
		{"no entry with data", &Matrix{Format: FormatGGUF, Entries: []Entry{{Name: "x.weight", Sums: []float32{1, 2}, Counts: []float64{0}}}},
			"no entry to write"},
		{"no entry", &Matrix{Format: FormatDat}, "no entry to write"},
		{"chunk count", &Matrix{Format: FormatDat, Chunks: 1 << 32, Entries: []Entry{{Name: "x.weight", Sums: []float32{1}, Counts: []float64{1}}}},
			"chunk count 4294967296"},
	} {
		var buf bytes.Buffer
		if err := WriteDat(&buf, tc.m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: WriteDat: %v, want %q", tc.name, err, tc.want)
		}
	}
	long := strings.Repeat("n", 56) // + ".in_sum2" is 64 bytes
	path := filepath.Join(t.TempDir(), "long.gguf")
	m := &Matrix{Format: FormatDat, Entries: []Entry{{Name: long, Sums: []float32{1}, Counts: []float64{1}}}}
	if err := WriteGGUF(path, m, nil, 512, false); err == nil || !strings.Contains(err.Error(), "entry "+long) {
		t.Errorf("long name: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a file was left: %v", err)
	}
	m.Entries[0].Name = long[1:]
	if err := WriteGGUF(path, m, nil, 512, false); err != nil {
		t.Errorf("a name of 63 bytes: %v", err)
	}
}

// Any .dat file the reader takes converts to GGUF and back to a .dat file
// the readers take, or is refused with an error (a name llama.cpp cannot
// read, values the chunk size overflows, no entry with data left, calls
// that do not fit int32 after the float32 token counts round them up).
func FuzzConvertRoundTrip(f *testing.F) {
	f.Add(datBytes([]Entry{{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{2}}}, true))
	f.Add(datBytes([]Entry{{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{0}}, {Name: "b", Sums: []float32{3e38}, Counts: []float64{1}}}, false))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadDat(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		path := filepath.Join(dir, "x.gguf")
		if err := WriteGGUF(path, m, nil, 512, true); err != nil {
			return
		}
		g, err := Open(path)
		if err != nil {
			t.Fatalf("re-read of the GGUF file written: %v", err)
		}
		var buf bytes.Buffer
		if err := WriteDat(&buf, g); err != nil {
			// No entry with data left, or a call count near 2^31 that
			// float32 token counts round past int32 calls: refused.
			if errors.Is(err, errNoEntries) || strings.Contains(err.Error(), "is more than a .dat file's calls") {
				return
			}
			t.Fatalf("GGUF -> .dat: %v", err)
		}
		back, err := ReadDat(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("re-read of the .dat written: %v", err)
		}
		if want, _ := Written(g, FormatDat); back.Len() != want {
			t.Fatalf("%d entries, Written says %d", back.Len(), want)
		}
	})
}
