package imatrix

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/alloctest"
)

// allocBound is the most a read may allocate for a count or length it has
// not proven: a few initial slices and chunks, nothing sized from the count.
const allocBound = 8 << 20

func i32s(v ...int32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

// A count or length in a .dat file is checked against the bytes left,
// which a large or sparse file has plenty of: reading one allocates only as
// the entries, names and values are really read, whole or as an index, and
// a name of zeros (a sparse file) allocates nothing.
func TestReadDatHugeCountsAllocate(t *testing.T) {
	const gib = int64(1) << 30
	type piece = map[int64][]byte
	for _, tc := range []struct {
		name   string
		size   int64
		pieces piece
		short  bool   // read pieces[0] from a shortReader, not a sparse file
		want   string // "": the file reads
		check  func(t *testing.T, m *Matrix)
	}{
		{name: "entry count 2e9 (the audit's repro)", size: 40 * gib, pieces: piece{0: i32s(2_000_000_000)},
			want: "imatrix: malformed file: entry : 0 values with 42949672944 bytes left"},
		{name: "entry count 2e9, damaged after one entry", size: 40 * gib,
			pieces: piece{0: append(append(i32s(2_000_000_000, 1), 'a'), i32s(1, 1, 0x3f800000, -5)...)},
			want:   "name of entry 2 of -5 bytes"},
		// A name of 64 MiB, "abc" and zeros, reads as "abc" (up to its
		// NUL) without holding the rest; so does a dataset name of zeros.
		{name: "long names of zeros", size: 8 + 64<<20 + 24 + 64<<20,
			pieces: piece{
				0:          append(i32s(1, 64<<20), "abc"...),
				8 + 64<<20: i32s(1, 2, 0x3f800000, 0x40000000, 7, 64<<20),
			},
			check: func(t *testing.T, m *Matrix) {
				if len(m.Entries) != 1 || m.Entries[0].Name != "abc" || m.Chunks != 7 || len(m.Datasets) != 0 {
					t.Errorf("entries %v, chunks %d, datasets %q", m.Entries, m.Chunks, m.Datasets)
				}
			}},
		// Values that are not there (a file shorter than it claims).
		{name: "2e8 values, truncated", size: 40 * gib, short: true,
			pieces: piece{0: append(append(i32s(1, 1), 'a'), i32s(1, 200_000_000, 0x3f800000)...)},
			want:   "imatrix: malformed file: reading values of a: unexpected EOF"},
		{name: "name of 2e9 bytes, truncated", size: 40 * gib, short: true,
			pieces: piece{0: append(i32s(1, 2_000_000_000), "abc"...)},
			want:   "imatrix: malformed file: reading name of entry 1: unexpected EOF"},
	} {
		for _, index := range []bool{false, true} {
			name := tc.name
			if index {
				name += ", index"
			}
			t.Run(name, func(t *testing.T) {
				var r io.ReaderAt
				if tc.short {
					r = alloctest.ShortReader(tc.pieces[0])
				} else {
					r = alloctest.SparseFile(t, tc.size, tc.pieces)
				}
				var m *Matrix
				var err error
				n := alloctest.Allocated(func() {
					if index {
						m, err = ReadIndex(r, tc.size)
					} else {
						m, err = ReadDat(io.NewSectionReader(r, 0, tc.size), tc.size)
					}
				})
				t.Logf("%v; allocated %d bytes", err, n)
				switch {
				case tc.want == "" && err != nil:
					t.Fatal(err)
				case tc.want != "" && (!errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want)):
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				if tc.check != nil {
					tc.check(t, m)
				}
				if n > allocBound {
					t.Errorf("allocated %d bytes, want at most %d", n, allocBound)
				}
			})
		}
	}
}

// A GGUF importance matrix whose tensor of sums (1 GiB here) is not there:
// reading it fails as before, without allocating for all of it.
func TestReadGGUFMissingSumsAllocate(t *testing.T) {
	var h []byte
	u32 := func(v uint32) { h = binary.LittleEndian.AppendUint32(h, v) }
	u64 := func(v uint64) { h = binary.LittleEndian.AppendUint64(h, v) }
	str := func(s string) { u64(uint64(len(s))); h = append(h, s...) }
	h = append(h, "GGUF"...)
	u32(3)
	u64(2) // tensors
	u64(1) // keys
	str(keyType)
	u32(8) // string
	str("imatrix")
	const n = 1 << 28 // f32 values: 1 GiB
	str("a.in_sum2")
	u32(2)
	u64(n)
	u64(1)
	u32(0) // f32
	u64(0)
	str("a.counts")
	u32(2)
	u64(1)
	u64(1)
	u32(0)
	u64(4 * n)
	for len(h)%32 != 0 {
		h = append(h, 0)
	}
	size := int64(len(h)) + 4*n + 32
	var err error
	got := alloctest.Allocated(func() { _, err = ReadGGUF(alloctest.ShortReader(h), size) })
	if err == nil || err.Error() != "a.in_sum2: EOF" {
		t.Errorf("error %v, want a.in_sum2: EOF", err)
	}
	if got > allocBound {
		t.Errorf("allocated %d bytes, want at most %d", got, allocBound)
	}
}

// countSeeds are .dat seeds for FuzzReadDat and FuzzReadIndex: a count
// over zeros, and names of zeros after their text.
func countSeeds() [][]byte {
	named := append(i32s(1, 5000), "abc"...)
	named = append(named, make([]byte, 5000-3)...)
	named = append(named, i32s(1, 2, 0x3f800000, 0x40000000, 7, 3000)...)
	named = append(named, make([]byte, 3000)...)
	return [][]byte{
		append(i32s(5000), make([]byte, 5000*16)...),
		named,
	}
}

// Values over several chunks read back exactly, from either format.
func TestReadLongEntries(t *testing.T) {
	sums := make([]float32, 2*chunkValues+3)
	for i := range sums {
		sums[i] = float32(i % 1000)
	}
	m := &Matrix{Chunks: 1, Entries: []Entry{
		{Name: "a.weight", Sums: sums, Counts: []float64{2}},
		{Name: "b.weight", Sums: []float32{1, 2}, Counts: []float64{1}},
	}}
	var dat bytes.Buffer
	if err := WriteDat(&dat, m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "long.gguf")
	if err := WriteGGUF(path, m, nil, 512, true); err != nil {
		t.Fatal(err)
	}
	fromDat, err := ReadDat(bytes.NewReader(dat.Bytes()), int64(dat.Len()))
	if err != nil {
		t.Fatal(err)
	}
	fromGGUF, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []*Matrix{fromDat, fromGGUF} {
		if len(got.Entries) != 2 || !slices.Equal(got.Entries[0].Sums, sums) || !slices.Equal(got.Entries[1].Sums, []float32{1, 2}) {
			t.Errorf("%v file: entries differ", got.Format)
		}
	}
}
