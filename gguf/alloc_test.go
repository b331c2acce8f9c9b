package gguf

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/alloctest"
)

// allocBound is the most a header read may allocate for a count it has not
// proven: a few initial slices and chunks, nothing sized from the count.
const allocBound = 8 << 20

// A count in a header is checked against the bytes left, which a large or
// sparse file has plenty of; the header is then read item by item, never
// allocating for the whole count up front (the runtime's out-of-memory is
// fatal, not an error). Each file must read with the error (or succeed)
// having allocated no more than a few MiB.
func TestReadHugeCountsAllocate(t *testing.T) {
	const tib = int64(1) << 40
	arrayHeader := func(elem ValueType, n uint64) *raw {
		return header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(elem)).u64(n)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		size int64 // of the sparse file; with short, of the shortReader
		// short reads b from a shortReader of size bytes, not from a
		// sparse file: the bytes past b are missing, not zeros.
		short   bool
		want    error // nil: the file reads
		message string
	}{
		// The audit's repros: counts that fit in a terabyte, not in a
		// header.
		{name: "key count 5e10", b: header(3, 0, 50_000_000_000).b, size: tib,
			want: ErrCorrupt, message: "key/value count 50000000000 at byte 16 runs past 268435456 bytes, the longest header read"},
		{name: "tensor count 3e10", b: header(3, 30_000_000_000, 0).b, size: tib,
			want: ErrCorrupt, message: "tensor count 30000000000 at byte 8 runs past"},
		{name: "string array 1e11", b: arrayHeader(TypeString, 100_000_000_000).b, size: tib,
			want: ErrCorrupt, message: "array of str: length 100000000000 at byte 41 runs past"},
		{name: "u8 array 1e11", b: arrayHeader(TypeUint8, 100_000_000_000).b, size: tib,
			want: ErrCorrupt, message: "array of u8: length 100000000000 at byte 41 runs past"},
		{name: "key length 1e11", b: header(3, 0, 1).u64(100_000_000_000).b, size: tib,
			want: ErrCorrupt, message: "key length 100000000000 at byte 24 runs past"},
		// Counts that fit in a header: the zeros after them read as
		// empty keys, names, strings, which end in an error soon.
		{name: "key count 1e7 over zeros", b: header(3, 0, 10_000_000).b, size: tib,
			want: ErrCorrupt, message: `key "" at byte 37 appears twice`},
		{name: "tensor count 1e7 over zeros", b: header(3, 10_000_000, 0).b, size: tib,
			want: ErrDuplicateTensor, message: `"": tensors 0 and 1 (at byte 48)`},
		{name: "string array 1e7, damaged", b: arrayHeader(TypeString, 10_000_000).str("a").str("b").u64(1 << 62).b, size: tib,
			want: ErrTruncated, message: "element 2: gguf: unexpected end of file: string at byte 67: length 4611686018427387904 runs past the end of the file"},
		{name: "array of arrays 1e7, damaged", b: arrayHeader(TypeArray, 10_000_000).u32(uint32(TypeUint8)).u64(0).u32(0xffff).b, size: tib,
			want: ErrCorrupt, message: "element 1: gguf: corrupt file: array at byte 61: unknown element type 65535"},
		{name: "bool array 1e7 over zeros, damaged", b: arrayHeader(TypeBool, 10_000_000).u8(1).u8(0).u8(2).b, size: tib,
			want: ErrCorrupt, message: "bool array element 2 at byte 51 is 2"},
		// Files shorter than they claim (the bytes are missing, not
		// zeros): the truncation error, after reading what is there.
		{name: "u8 array 2e8, truncated", b: arrayHeader(TypeUint8, 200_000_000).u8(1).b, size: tib, short: true,
			want: ErrTruncated, message: "key \"k\": gguf: unexpected end of file: 200000000 bytes needed at byte 49"},
		{name: "f32 array 5e7, truncated", b: arrayHeader(TypeFloat32, 50_000_000).u32(1).b, size: tib, short: true,
			want: ErrTruncated, message: "key \"k\": gguf: unexpected end of file: 200000000 bytes needed at byte 49"},
		{name: "i64 array 2e7, truncated", b: arrayHeader(TypeInt64, 20_000_000).u64(1).b, size: tib, short: true,
			want: ErrTruncated, message: "160000000 bytes needed at byte 49"},
		{name: "key length 2e8, truncated", b: header(3, 0, 1).u64(200_000_000).bytes('k').b, size: tib, short: true,
			want: ErrTruncated, message: "key 0: gguf: unexpected end of file: 200000000 bytes needed at byte 32"},
		{name: "string array 1e7, truncated", b: arrayHeader(TypeString, 10_000_000).str("a").b, size: tib, short: true,
			want: ErrTruncated, message: "element 1: gguf: unexpected end of file: 8 bytes needed at byte 58"},
		// A valid file that merely claims a lot: a terabyte tensor.
		{name: "terabyte tensor", b: header(3, 1, 0).tensor("huge", formats.F32, 0, 1<<20, 1<<18).data(0).b, size: 96 + tib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.ReaderAt
			if tc.short {
				r = alloctest.ShortReader(tc.b)
			} else {
				r = alloctest.SparseFile(t, tc.size, map[int64][]byte{0: tc.b})
			}
			var err error
			n := alloctest.Allocated(func() { _, err = Read(r, tc.size) })
			if tc.want == nil && err != nil || !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %q, want it to contain %q", err, tc.message)
			}
			t.Logf("%v; allocated %d bytes", err, n)
			if n > allocBound {
				t.Errorf("allocated %d bytes, want at most %d", n, allocBound)
			}
		})
	}
}

// Counts past the first slices' capacity grow them as items are read: the
// header reads back exactly, with arrays of every kind longer than a chunk.
func TestReadLongArrays(t *testing.T) {
	const n = maxChunk/2 + 3 // a u16 array of two chunks, others of more
	u8 := make([]uint8, 3*maxChunk+5)
	for i := range u8 {
		u8[i] = uint8(i * 7)
	}
	i16 := make([]int16, n)
	f64 := make([]float64, n)
	bools := make([]bool, n)
	strs := make([]string, 3*maxPrealloc+1)
	for i := range i16 {
		i16[i], f64[i], bools[i] = int16(i), float64(i)/3, i%3 == 0
	}
	for i := range strs {
		strs[i] = strings.Repeat("x", i%300)
	}
	long := strings.Repeat("long string ", 2*maxChunk/12+1) // more than two chunks
	md := Metadata{
		{"u8", ArrayValue(u8)},
		{"i16", ArrayValue(i16)},
		{"f64", ArrayValue(f64)},
		{"bool", ArrayValue(bools)},
		{"strs", ArrayValue(strs)},
		{"long", StringValue(long)},
	}
	for i := range maxPrealloc + 10 {
		md = append(md, KV{Key: "k." + strings.Repeat("y", i%20) + string(rune('a'+i%26)) + strconv.Itoa(i), Value: Uint32Value(uint32(i))})
	}
	var tensors []TensorInfo
	for i := range maxPrealloc + 10 {
		tensors = append(tensors, TensorInfo{Name: "t" + strconv.Itoa(i), Shape: []int64{int64(i%5 + 1), 2, 1}[:i%3+1], Type: formats.F32})
	}
	file, err := read(encodeFile(t, md, tensors))
	if err != nil {
		t.Fatal(err)
	}
	if len(file.Metadata) != len(md) || len(file.Tensors) != len(tensors) {
		t.Fatalf("%d keys, %d tensors", len(file.Metadata), len(file.Tensors))
	}
	for i, kv := range md {
		if got := file.Metadata[i]; got.Key != kv.Key || !got.Value.Equal(kv.Value) {
			t.Fatalf("key %d %q differs", i, kv.Key)
		}
	}
	for i, ti := range tensors {
		got := file.Tensors[i]
		if got.Name != ti.Name || !equalShape(got.Shape, ti.Shape) || file.TensorIndex(ti.Name) != i {
			t.Fatalf("tensor %d %q: %q %v", i, ti.Name, got.Name, got.Shape)
		}
	}
	// A bool that is not 0 or 1 in a later chunk is found where it is.
	b := header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeBool)).u64(maxChunk + 2)
	at := len(b.b) + maxChunk + 1
	b.bytes(make([]byte, maxChunk+1)...).u8(3)
	if _, err := read(b.b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bool array element "+strconv.Itoa(maxChunk+1)+" at byte "+strconv.Itoa(at)+" is 3") {
		t.Errorf("error %v", err)
	}
}

// A header read allocates nothing per element of an array of numbers, and
// one string per string.
func TestReadArrayAllocs(t *testing.T) {
	strs := make([]string, 1000)
	for i := range strs {
		strs[i] = "token" + strconv.Itoa(i)
	}
	file := encodeFile(t, Metadata{
		{"f32", ArrayValue(make([]float32, 100_000))},
		{"strs", ArrayValue(strs)},
	}, nil)
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := Read(bytes.NewReader(file), int64(len(file))); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1000+30 {
		t.Errorf("%v allocations to read %d strings and 100,000 numbers", allocs, len(strs))
	}
}

// countSeeds are FuzzRead seeds whose counts are more than the first slices
// hold: over zeros (a duplicate key or tensor name ends them) and valid.
func countSeeds() [][]byte {
	const n = maxPrealloc + 100
	arrays := func(elem ValueType, elemBytes int) []byte {
		r := header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(elem)).u64(n)
		return r.bytes(make([]byte, n*elemBytes)...).b
	}
	return [][]byte{
		header(3, 0, n).bytes(make([]byte, n*minKVBytes)...).b,
		header(3, n, 0).bytes(make([]byte, n*minTensorBytes)...).b,
		arrays(TypeString, 8),                 // empty strings
		arrays(TypeArray, int(minArrayBytes)), // empty u8 arrays
		arrays(TypeBool, 1),
	}
}
