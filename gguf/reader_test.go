package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
)

// raw builds GGUF bytes field by field, so tests can craft broken files.
type raw struct{ b []byte }

func (r *raw) u8(v uint8) *raw   { r.b = append(r.b, v); return r }
func (r *raw) u16(v uint16) *raw { r.b = binary.LittleEndian.AppendUint16(r.b, v); return r }
func (r *raw) u32(v uint32) *raw { r.b = binary.LittleEndian.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw { r.b = binary.LittleEndian.AppendUint64(r.b, v); return r }
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.b = append(r.b, s...); return r }
func (r *raw) bytes(p ...byte) *raw {
	r.b = append(r.b, p...)
	return r
}

// header starts a file: magic, version, tensor and key counts.
func header(version uint32, nTensors, nKV uint64) *raw {
	r := &raw{}
	r.bytes('G', 'G', 'U', 'F').u32(version).u64(nTensors).u64(nKV)
	return r
}

// tensor appends a tensor info.
func (r *raw) tensor(name string, typ formats.Type, offset uint64, shape ...uint64) *raw {
	r.str(name).u32(uint32(len(shape)))
	for _, d := range shape {
		r.u64(d)
	}
	return r.u32(uint32(typ)).u64(offset)
}

// pad pads to 32 bytes and appends n data bytes.
func (r *raw) data(n int) *raw {
	for len(r.b)%32 != 0 {
		r.b = append(r.b, 0)
	}
	r.b = append(r.b, make([]byte, n)...)
	return r
}

func read(b []byte) (*File, error) { return Read(bytes.NewReader(b), int64(len(b))) }

// validFile is a small file with one key of each kind and two tensors.
func validFile() []byte {
	r := header(3, 2, 4)
	r.str("general.architecture").u32(uint32(TypeString)).str("llama")
	r.str("a.u32").u32(uint32(TypeUint32)).u32(7)
	r.str("a.arr").u32(uint32(TypeArray)).u32(uint32(TypeInt16)).u64(3).u16(1).u16(0xffff).u16(3)
	r.str("a.strs").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).str("x").str("yz")
	r.tensor("a", formats.F32, 0, 8, 2) // 64 bytes
	r.tensor("b", formats.F16, 64, 16)  // 32 bytes
	return r.data(96).b
}

func TestReadValid(t *testing.T) {
	f, err := read(validFile())
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || len(f.Metadata) != 4 || len(f.Tensors) != 2 || f.Alignment != 32 {
		t.Fatalf("got version %d, %d keys, %d tensors, alignment %d", f.Version, len(f.Metadata), len(f.Tensors), f.Alignment)
	}
	if arch, _ := f.Metadata.Text("general.architecture"); arch != "llama" {
		t.Errorf("architecture %q", arch)
	}
	if v, _ := f.Metadata.Uint("a.u32"); v != 7 {
		t.Errorf("a.u32 = %d", v)
	}
	arr, _ := f.Metadata.Lookup("a.arr")
	if arr.ElemType() != TypeInt16 || arr.Len() != 3 || arr.Elem(1).String() != "-1" {
		t.Errorf("a.arr = %v", arr)
	}
	if s, _ := f.Metadata.Lookup("a.strs"); s.String() != `[str x 2: "x", "yz"]` {
		t.Errorf("a.strs = %v", s)
	}
	b := f.Tensors[1]
	if b.Name != "b" || b.Type != formats.F16 || b.Size != 32 || b.Offset != 64 || f.TensorIndex("b") != 1 || f.TensorIndex("c") != -1 {
		t.Errorf("tensor b = %+v", b)
	}
	if f.TensorReader(0).Size() != 64 {
		t.Errorf("tensor a reader size %d", f.TensorReader(0).Size())
	}
}

// TestReadErrors feeds crafted broken files; each must fail with the right
// sentinel error and never panic or allocate what the file cannot hold.
func TestReadErrors(t *testing.T) {
	kv := func(nTensors uint64) *raw { return header(3, nTensors, 1) }
	tests := []struct {
		name string
		file []byte
		want error
	}{
		{"empty", nil, ErrNotGGUF},
		{"wrong magic", append([]byte("GGML"), validFile()[4:]...), ErrNotGGUF},
		{"version 1", header(1, 0, 0).b, ErrVersion},
		{"version 4", header(4, 0, 0).b, ErrVersion},
		{"big endian", (&raw{}).bytes('G', 'G', 'U', 'F', 0, 0, 0, 3).u64(0).u64(0).b, ErrVersion},
		{"truncated header", validFile()[:20], ErrTruncated},
		{"absurd key count", header(3, 0, 1<<62).b, ErrTruncated},
		{"absurd tensor count", header(3, 1<<62, 0).b, ErrTruncated},
		{"key length 2^60", header(3, 0, 1).u64(1 << 60).bytes(make([]byte, 64)...).b, ErrTruncated},
		{"string length 2^60", kv(0).str("k").u32(uint32(TypeString)).u64(1 << 60).b, ErrTruncated},
		{"string length max", kv(0).str("k").u32(uint32(TypeString)).u64(math.MaxUint64).b, ErrTruncated},
		{"unknown value type", kv(0).str("k").u32(13).u64(0).b, ErrCorrupt},
		{"unknown array type", kv(0).str("k").u32(uint32(TypeArray)).u32(99).u64(0).b, ErrCorrupt},
		{"array length 2^60", kv(0).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1 << 60).b, ErrTruncated},
		{"string array length 2^60", kv(0).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1 << 60).b, ErrTruncated},
		{"array short", kv(0).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(3).u16(0).b, ErrTruncated},
		{"nested arrays too deep", func() []byte {
			r := kv(0).str("k").u32(uint32(TypeArray))
			for range 20 {
				r.u32(uint32(TypeArray)).u64(1)
			}
			return r.u32(uint32(TypeUint8)).u64(0).b
		}(), ErrCorrupt},
		{"bad bool", kv(0).str("k").u32(uint32(TypeBool)).u8(2).data(0).b, ErrCorrupt},
		{"bad bool in array", kv(0).str("k").u32(uint32(TypeArray)).u32(uint32(TypeBool)).u64(2).u8(1).u8(5).data(0).b, ErrCorrupt},
		{"duplicate key", header(3, 0, 2).str("k").u32(uint32(TypeUint8)).u8(1).str("k").u32(uint32(TypeUint8)).u8(1).data(0).b, ErrCorrupt},
		{"alignment not u32", kv(0).str(KeyAlignment).u32(uint32(TypeUint64)).u64(32).data(0).b, ErrCorrupt},
		{"alignment zero", kv(0).str(KeyAlignment).u32(uint32(TypeUint32)).u32(0).data(0).b, ErrCorrupt},
		{"alignment not power of two", kv(0).str(KeyAlignment).u32(uint32(TypeUint32)).u32(48).data(0).b, ErrCorrupt},
		{"five dimensions", header(3, 1, 0).tensor("t", formats.F32, 0, 1, 1, 1, 1, 1).data(4).b, ErrCorrupt},
		{"zero dimension", header(3, 1, 0).tensor("t", formats.F32, 0, 4, 0).data(16).b, ErrCorrupt},
		{"negative dimension", header(3, 1, 0).tensor("t", formats.F32, 0, 1<<63).data(16).b, ErrCorrupt},
		{"dimensions overflow", header(3, 1, 0).tensor("t", formats.F32, 0, 1<<32, 1<<32).data(16).b, ErrCorrupt},
		{"size overflows", header(3, 1, 0).tensor("t", formats.F64, 0, 1<<61, 2).data(16).b, ErrCorrupt},
		{"unknown tensor type", header(3, 1, 0).tensor("t", 200, 0, 4).data(16).b, formats.ErrUnknownType},
		{"row not a block multiple", header(3, 1, 0).tensor("t", formats.Q4_0, 0, 33).data(64).b, ErrCorrupt},
		{"duplicate tensor", header(3, 2, 0).tensor("t", formats.F32, 0, 8).tensor("t", formats.F32, 32, 8).data(64).b, ErrDuplicateTensor},
		{"data past end", header(3, 1, 0).tensor("t", formats.F32, 0, 8).data(31).b, ErrTensorData},
		{"offset past end", header(3, 1, 0).tensor("t", formats.F32, 1<<40, 8).data(32).b, ErrTensorData},
		{"offset 2^63", header(3, 1, 0).tensor("t", formats.F32, 1<<63, 8).data(32).b, ErrTensorData},
		{"misaligned", header(3, 1, 0).tensor("t", formats.F32, 4, 4).data(32).b, ErrTensorData},
		{"overlap", header(3, 2, 0).tensor("t", formats.F32, 0, 16).tensor("u", formats.F32, 32, 8).data(96).b, ErrTensorData},
		{"overlap out of order", header(3, 2, 0).tensor("u", formats.F32, 32, 16).tensor("t", formats.F32, 0, 16).data(96).b, ErrTensorData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := read(tt.file)
			if err == nil {
				t.Fatalf("read succeeded: %d keys, %d tensors", len(f.Metadata), len(f.Tensors))
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %q, want %q", err, tt.want)
			}
			t.Log(err)
		})
	}
}

// TestReadTruncatedEverywhere cuts a valid file at every length: each cut
// must fail cleanly.
func TestReadTruncatedEverywhere(t *testing.T) {
	full := validFile()
	for n := range len(full) {
		if _, err := read(full[:n]); err == nil {
			t.Errorf("file cut at %d of %d bytes read without error", n, len(full))
		} else if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrTensorData) && !errors.Is(err, ErrNotGGUF) && !errors.Is(err, ErrCorrupt) {
			t.Errorf("cut at %d: unexpected error %v", n, err)
		}
	}
}

func TestReadVersion2(t *testing.T) {
	b := validFile()
	binary.LittleEndian.PutUint32(b[4:], 2)
	f, err := read(b)
	if err != nil || f.Version != 2 {
		t.Fatalf("version 2: %v", err)
	}
}

// TestCustomAlignment checks that general.alignment moves the data section
// and tensor offsets.
func TestCustomAlignment(t *testing.T) {
	r := header(3, 1, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(64).tensor("t", formats.F32, 0, 4)
	for len(r.b)%64 != 0 {
		r.u8(0)
	}
	dataOffset := len(r.b)
	r.bytes(make([]byte, 16)...)
	f, err := read(r.b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Alignment != 64 || f.DataOffset != int64(dataOffset) {
		t.Fatalf("alignment %d, data offset %d; want 64, %d", f.Alignment, f.DataOffset, dataOffset)
	}
}
