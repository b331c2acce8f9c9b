package gguf

import (
	"bytes"
	"testing"

	"github.com/gquant/gquant/formats"
)

// encodeFile lays out a whole file in memory: header, then zero data.
func encodeFile(t testing.TB, md Metadata, tensors []TensorInfo) []byte {
	t.Helper()
	size, err := FileSize(md, tensors)
	if err != nil {
		t.Fatal(err)
	}
	e := &encoder{}
	if _, err := encodeHeader(e, Version, md, append([]TensorInfo(nil), tensors...)); err != nil {
		t.Fatal(err)
	}
	return append(e.buf, make([]byte, size-e.n)...)
}

// FuzzRead feeds arbitrary bytes to Read. It must never panic or allocate
// beyond what the input can hold; whatever it accepts must re-encode to a
// file that reads back the same.
func FuzzRead(f *testing.F) {
	f.Add(validFile())
	f.Add(encodeFile(f, everyValue(), []TensorInfo{
		{Name: "q", Shape: []int64{32, 2}, Type: formats.Q8_0},
		{Name: "n", Shape: []int64{3}, Type: formats.F32},
	}))
	f.Add(encodeFile(f, Metadata{{KeyAlignment, Uint32Value(64)}}, []TensorInfo{{Name: "x", Shape: []int64{1, 1, 1, 1}, Type: formats.I8}}))
	f.Add(header(3, 1, 0).tensor("t", formats.F32, 0, 8).data(31).b)
	f.Add(header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1).u32(uint32(TypeString)).u64(1).str("s").b)
	f.Add(header(2, 2, 0).tensor("u", formats.F32, 32, 16).tensor("t", formats.F32, 0, 16).data(96).b)
	for _, b := range countSeeds() {
		f.Add(b)
	}

	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := read(b)
		if err != nil {
			return
		}
		size, err := FileSize(file.Metadata, file.Tensors)
		if err != nil {
			t.Fatalf("read a file whose header cannot be written again: %v", err)
		}
		if size > 1<<20 {
			return // a huge alignment; not worth allocating
		}
		again, err := read(encodeFile(t, file.Metadata, file.Tensors))
		if err != nil {
			t.Fatalf("re-encoded file does not read: %v", err)
		}
		if len(again.Metadata) != len(file.Metadata) || len(again.Tensors) != len(file.Tensors) {
			t.Fatal("re-encoded file differs in counts")
		}
		for i, kv := range file.Metadata {
			if again.Metadata[i].Key != kv.Key || !again.Metadata[i].Value.Equal(kv.Value) {
				t.Fatalf("key %q changed", kv.Key)
			}
		}
		for i, ti := range file.Tensors {
			a := again.Tensors[i]
			if a.Name != ti.Name || a.Type != ti.Type || a.Size != ti.Size || !equalShape(a.Shape, ti.Shape) {
				t.Fatalf("tensor %q changed", ti.Name)
			}
		}
		// Canonical layouts (what every writer produces) with zero padding
		// re-encode to the very same header bytes.
		canonical := file.DataOffset <= int64(len(b))
		for i, ti := range file.Tensors {
			canonical = canonical && ti.Offset == again.Tensors[i].Offset
		}
		if !canonical {
			return
		}
		hdr := b[:file.DataOffset]
		if !bytes.Equal(hdr[unpadded(file):], make([]byte, file.DataOffset-unpadded(file))) {
			return
		}
		e := &encoder{}
		if _, err := encodeHeader(e, file.Version, file.Metadata, append([]TensorInfo(nil), file.Tensors...)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.buf, hdr) {
			t.Fatal("canonical header re-encodes differently")
		}
	})
}

// unpadded is the header's length before the padding to the alignment.
func unpadded(f *File) int64 {
	e := &encoder{count: true}
	e.raw([]byte(Magic))
	e.u32(f.Version)
	e.u64(uint64(len(f.Tensors)))
	e.u64(uint64(len(f.Metadata)))
	for _, kv := range f.Metadata {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		e.value(kv.Value)
	}
	for _, t := range f.Tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for range t.Shape {
			e.u64(0)
		}
		e.u32(0)
		e.u64(0)
	}
	return e.n
}

// FuzzParseNames: shard file names and temporary file names, read from
// directory listings (what any other program may have put there). A shard
// name parses back from the name ShardPath gives it.
func FuzzParseNames(f *testing.F) {
	for _, s := range []string{"m-00001-of-00003.gguf", "a/b-00000-of-00001.gguf", "m-99999-of-65536.gguf", ".out.gguf.tmp-12-abc", "..out.gguf.tmp-1-x.tmp-2-y", ".out.gguf.tmp-1-x.progress"} {
		f.Add(s, "out.gguf")
	}
	f.Fuzz(func(t *testing.T, name, base string) {
		if prefix, i, n, ok := ParseShardPath(name); ok {
			if i < 0 || i >= n || n > 65535 {
				t.Fatalf("%q: shard %d of %d", name, i, n)
			}
			p2, i2, n2, ok2 := ParseShardPath(ShardPath(prefix, i, n))
			if !ok2 || p2 != prefix || i2 != i || n2 != n {
				t.Fatalf("%q: %q %d %d does not parse back", name, prefix, i, n)
			}
		}
		if pid, token, ours, _ := parseTempName(name, base); ours && (pid <= 0 || token == "") {
			t.Fatalf("%q of %q: ours with pid %d, token %q", name, base, pid, token)
		}
	})
}
