package gguf

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
)

// goldenFiles lists every GGUF file of the golden e2e runs.
func goldenFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{golden.Path(t, "e2e"), golden.Path(t, "e2e", "split")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no golden .gguf files")
	}
	return out
}

// TestRewriteGolden re-writes every golden file from its metadata and tensors
// and expects the reference's bytes exactly; HeaderSize and FileSize must
// predict the layout to the byte.
func TestRewriteGolden(t *testing.T) {
	for _, path := range goldenFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := read(want)
			if err != nil {
				t.Fatal(err)
			}
			if hs, err := HeaderSize(f.Metadata, f.Tensors); err != nil || hs != f.DataOffset {
				t.Errorf("HeaderSize = %d, %v; data offset is %d", hs, err, f.DataOffset)
			}
			if fs, err := FileSize(f.Metadata, f.Tensors); err != nil || fs != f.Size {
				t.Errorf("FileSize = %d, %v; file is %d bytes", fs, err, f.Size)
			}
			out := filepath.Join(t.TempDir(), "out.gguf")
			w, err := Create(out, f.Metadata, f.Tensors, &CreateOptions{Inputs: []string{path}})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			for i, ti := range w.Tensors() {
				if ti.Offset != f.Tensors[i].Offset || ti.Size != f.Tensors[i].Size {
					t.Fatalf("tensor %q: writer puts it at %d (%d bytes), file at %d (%d bytes)", ti.Name, ti.Offset, ti.Size, f.Tensors[i].Offset, f.Tensors[i].Size)
				}
				if err := w.WriteTensor(f.TensorReader(i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("rewritten file differs: %d bytes, want %d; first difference at byte %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// everyValue holds one key of every value type, including nested arrays and
// values that only survive as bits (NaN payload, negative zero).
func everyValue() Metadata {
	return Metadata{
		{"u8", Uint8Value(200)},
		{"i8", Int8Value(-100)},
		{"u16", Uint16Value(60000)},
		{"i16", Int16Value(-30000)},
		{"u32", Uint32Value(4e9)},
		{"i32", Int32Value(-2e9)},
		{"f32", Float32Value(math.Float32frombits(0x7fc00123))},
		{"bool", BoolValue(true)},
		{"str", StringValue("héllo\x00\xff")},
		{"u64", Uint64Value(math.MaxUint64)},
		{"i64", Int64Value(math.MinInt64)},
		{"f64", Float64Value(math.Copysign(0, -1))},
		{"arr.u8", ArrayValue([]uint8{1, 2, 3})},
		{"arr.i8", ArrayValue([]int8{-1, 2})},
		{"arr.u16", ArrayValue([]uint16{1, 65535})},
		{"arr.i16", ArrayValue([]int16{-1, 7})},
		{"arr.u32", ArrayValue([]uint32{1, 1 << 31})},
		{"arr.i32", ArrayValue([]int32{-5})},
		{"arr.f32", ArrayValue([]float32{1.5, float32(math.Inf(-1))})},
		{"arr.bool", ArrayValue([]bool{true, false, true})},
		{"arr.str", ArrayValue([]string{"a", "", "ccc"})},
		{"arr.u64", ArrayValue([]uint64{math.MaxUint64})},
		{"arr.i64", ArrayValue([]int64{-1, 1})},
		{"arr.f64", ArrayValue([]float64{math.Pi})},
		{"arr.empty", ArrayValue([]uint32{})},
		{"arr.arr", ArrayValue([]Value{ArrayValue([]string{"x"}), ArrayValue([]int64{1, 2}), ArrayValue([]Value{ArrayValue([]uint8{9})})})},
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	md := everyValue()
	tensors := []TensorInfo{
		{Name: "a", Shape: []int64{32, 3}, Type: formats.Q8_0},
		{Name: "b", Shape: []int64{5}, Type: formats.F32},
		{Name: "c", Shape: []int64{256, 2, 2}, Type: formats.Q4_K},
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	w, err := Create(out, md, tensors, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Write the tensor data in odd-sized pieces spanning tensor boundaries.
	var total int64
	for _, ti := range w.Tensors() {
		total += ti.Size
	}
	data := make([]byte, total)
	for i := range data {
		data[i] = byte(i*7 + 1)
	}
	for p := data; len(p) > 0; {
		n := min(len(p), 37)
		if _, err := w.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if fs, _ := FileSize(md, tensors); fs != int64(len(b)) {
		t.Errorf("FileSize %d, file is %d bytes", fs, len(b))
	}
	f, err := read(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Metadata) != len(md) {
		t.Fatalf("%d keys, want %d", len(f.Metadata), len(md))
	}
	for i, kv := range f.Metadata {
		if kv.Key != md[i].Key || !kv.Value.Equal(md[i].Value) {
			t.Errorf("key %d: %s = %v, want %s = %v", i, kv.Key, kv.Value, md[i].Key, md[i].Value)
		}
	}
	var got []byte
	for i, ti := range f.Tensors {
		if ti.Name != tensors[i].Name || ti.Type != tensors[i].Type || len(ti.Shape) != len(tensors[i].Shape) {
			t.Errorf("tensor %d: %+v, want %+v", i, ti, tensors[i])
		}
		p, _ := io.ReadAll(f.TensorReader(i))
		got = append(got, p...)
	}
	if !bytes.Equal(got, data) {
		t.Error("tensor data differs")
	}
	// Version 2 writes the same layout with another version number.
	out2 := filepath.Join(t.TempDir(), "v2.gguf")
	w, err = Create(out2, md, nil, &CreateOptions{Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(out2)
	if f2, err := read(b2); err != nil || f2.Version != 2 {
		t.Fatalf("version 2 file: %v", err)
	}
}

func TestValueAccessors(t *testing.T) {
	md := everyValue()
	if v, ok := md.Uint("u32"); !ok || v != 4e9 {
		t.Errorf("Uint(u32) = %d, %v", v, ok)
	}
	if _, ok := md.Uint("i8"); ok {
		t.Error("Uint of a negative i8 succeeded")
	}
	if v, ok := md.Int("i64"); !ok || v != math.MinInt64 {
		t.Errorf("Int(i64) = %d, %v", v, ok)
	}
	if _, ok := md.Int("u64"); ok {
		t.Error("Int of MaxUint64 succeeded")
	}
	if v, _ := md.Lookup("arr.f32"); v.Slice().([]float32)[0] != 1.5 {
		t.Errorf("arr.f32 = %v", v)
	}
	if v, _ := md.Lookup("arr.str"); v.String() != `[str x 3: "a", "", "ccc"]` {
		t.Errorf("arr.str prints as %s", v)
	}
	md.Set("u8", Uint8Value(1))
	md.Set("new", StringValue("x"))
	if md[0].Value.String() != "1" || md[len(md)-1].Key != "new" {
		t.Error("Set did not replace in place or append at the end")
	}
	if !md.Delete("u8") || md.Index("u8") != -1 || md[0].Key != "i8" {
		t.Error("Delete")
	}
}

func TestWriterFailures(t *testing.T) {
	dir := t.TempDir()
	tensors := []TensorInfo{{Name: "a", Shape: []int64{8}, Type: formats.F32}, {Name: "b", Shape: []int64{4}, Type: formats.F16}}
	final := filepath.Join(dir, "out.gguf")
	if err := os.WriteFile(final, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	leftovers := func(t *testing.T) {
		t.Helper()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != "out.gguf" && e.Name() != "in.gguf" {
				t.Errorf("left behind %s", e.Name())
			}
		}
		if b, _ := os.ReadFile(final); string(b) != "old" {
			t.Errorf("final name holds %q, want the old file untouched", b)
		}
	}

	t.Run("abort", func(t *testing.T) {
		w, err := Create(final, nil, tensors, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(make([]byte, 10))
		w.Abort()
		leftovers(t)
		if err := w.Close(); !errors.Is(err, ErrWriter) {
			t.Errorf("Close after Abort: %v", err)
		}
	})
	t.Run("close too early", func(t *testing.T) {
		w, _ := Create(final, nil, tensors, nil)
		w.WriteTensor(bytes.NewReader(make([]byte, 32)))
		if err := w.Close(); !errors.Is(err, ErrWriter) || !strings.Contains(err.Error(), `"b"`) {
			t.Errorf("Close with a tensor missing: %v", err)
		}
		leftovers(t)
	})
	t.Run("short tensor", func(t *testing.T) {
		w, _ := Create(final, nil, tensors, nil)
		if err := w.WriteTensor(bytes.NewReader(make([]byte, 31))); !errors.Is(err, ErrWriter) {
			t.Errorf("short tensor: %v", err)
		}
		if err := w.Close(); err == nil {
			t.Error("Close after a failed write succeeded")
		}
		leftovers(t)
	})
	t.Run("too much data", func(t *testing.T) {
		w, _ := Create(final, nil, tensors, nil)
		if _, err := w.Write(make([]byte, 41)); !errors.Is(err, ErrWriter) {
			t.Errorf("41 bytes for 40: %v", err)
		}
		leftovers(t)
	})
	t.Run("failing reader", func(t *testing.T) {
		w, _ := Create(final, nil, tensors, nil)
		boom := errors.New("boom")
		if err := w.WriteTensor(io.MultiReader(bytes.NewReader(make([]byte, 3)), errReader{boom})); !errors.Is(err, boom) {
			t.Errorf("got %v", err)
		}
		leftovers(t)
	})
	t.Run("overwrite input", func(t *testing.T) {
		in := filepath.Join(dir, "in.gguf")
		os.WriteFile(in, nil, 0o644)
		other := filepath.Join(dir, ".", "sub", "..", "in.gguf")
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		if _, err := Create(other, nil, nil, &CreateOptions{Inputs: []string{final, in}}); !errors.Is(err, ErrSameFile) {
			t.Errorf("overwriting an input: %v", err)
		}
		link := filepath.Join(dir, "link.gguf")
		if err := os.Link(in, link); err == nil {
			if _, err := Create(link, nil, nil, &CreateOptions{Inputs: []string{in}}); !errors.Is(err, ErrSameFile) {
				t.Errorf("overwriting an input through a hard link: %v", err)
			}
		}
		os.Remove(in)
		os.Remove(link)
		os.Remove(filepath.Join(dir, "sub"))
		leftovers(t)
	})
	t.Run("bad infos", func(t *testing.T) {
		bad := [][]TensorInfo{
			{{Name: "a", Shape: []int64{8}, Type: formats.F32}, {Name: "a", Shape: []int64{8}, Type: formats.F32}},
			{{Name: "a", Shape: []int64{33}, Type: formats.Q4_0}},
			{{Name: "a", Shape: []int64{8}, Type: formats.F32, Size: 31}},
			{{Name: "a", Shape: []int64{0}, Type: formats.F32}},
			{{Name: "a", Shape: []int64{8}, Type: 255}},
		}
		for _, ts := range bad {
			if _, err := Create(final, nil, ts, nil); err == nil {
				t.Errorf("Create accepted %+v", ts)
			}
			if _, err := HeaderSize(nil, ts); err == nil {
				t.Errorf("HeaderSize accepted %+v", ts)
			}
		}
		if _, err := Create(final, Metadata{{"k", Value{}}}, nil, nil); !errors.Is(err, ErrWriter) {
			t.Errorf("zero Value: %v", err)
		}
		if _, err := Create(final, Metadata{{KeyAlignment, Uint32Value(3)}}, nil, nil); err == nil {
			t.Error("alignment 3 accepted")
		}
		leftovers(t)
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestWriteTensorFrom copies tensors file to file through the kernel path
// and checks the result.
func TestWriteTensorFrom(t *testing.T) {
	path := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	infos := make([]TensorInfo, len(m.Tensors))
	for i, ti := range m.Tensors {
		infos[i] = ti.TensorInfo
	}
	out := filepath.Join(t.TempDir(), "copy.gguf")
	w, err := Create(out, m.Metadata, infos, &CreateOptions{Inputs: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i := range m.Tensors {
		f, off := m.TensorFile(i)
		if err := w.WriteTensorFrom(f, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile(path)
	if !bytes.Equal(got, want) {
		t.Fatalf("copy differs at byte %d", firstDiff(got, want))
	}
}

// TestSkipRemaining writes one tensor and leaves the rest as a hole: the
// file must have its full size and read back.
func TestSkipRemaining(t *testing.T) {
	tensors := []TensorInfo{
		{Name: "a", Shape: []int64{5}, Type: formats.F32},
		{Name: "b", Shape: []int64{1 << 20, 64}, Type: formats.Q8_0},
	}
	path := filepath.Join(t.TempDir(), "sparse.gguf")
	w, err := Create(path, nil, tensors, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.SkipRemaining(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if want, _ := FileSize(nil, tensors); m.Size() != want {
		t.Errorf("size %d, want %d", m.Size(), want)
	}
	head := make([]byte, 4)
	m.TensorReader(0).ReadAt(head, 0)
	if !bytes.Equal(head, []byte{1, 2, 3, 0}) {
		t.Errorf("first tensor starts %v", head)
	}
}

// TestWriteStartsWriteback writes tensors larger than writebackEvery in
// pieces of odd sizes, with a rewind in the middle of one, so that the
// writes that start the disk's writeback fall inside tensors, and reads the
// file back: asking the kernel to write early must not change a byte.
func TestWriteStartsWriteback(t *testing.T) {
	n := int64(writebackEvery/4 + 3) // f32 values: about 1.0 x writebackEvery bytes each
	tensors := []TensorInfo{{Name: "a", Shape: []int64{n}, Type: formats.F32}, {Name: "b", Shape: []int64{2 * n}, Type: formats.F32}}
	data := make([]byte, 12*n)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	out := filepath.Join(t.TempDir(), "big.gguf")
	w, err := Create(out, nil, tensors, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	write := func(p []byte) {
		t.Helper()
		for len(p) > 0 {
			k := min(len(p), 999_983)
			if _, err := w.Write(p[:k]); err != nil {
				t.Fatal(err)
			}
			p = p[k:]
		}
	}
	write(data[:4*n+5*writebackEvery/4])
	if err := w.RewindTensor(); err != nil {
		t.Fatal(err)
	}
	write(data[4*n:])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i, want := range [][]byte{data[:4*n], data[4*n:]} {
		got := make([]byte, len(want))
		if _, err := m.TensorReader(i).ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("tensor %d differs at byte %d", i, firstDiff(got, want))
		}
	}
}
