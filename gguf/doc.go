// Package gguf reads and writes GGUF files, the model format of llama.cpp
// and ik_llama.cpp, the way the reference lays them out, byte for byte.
//
// A GGUF file is a header (magic, version, metadata key/value pairs, tensor
// infos), zero padding to the alignment, then the data section: each
// tensor's bytes followed by zero padding to the alignment. Versions 2 and 3
// (little-endian) are read; version 1 and big-endian files are refused.
//
// # Reading
//
// Read parses the header from any io.ReaderAt of known size and returns a
// File; tensor data is only touched through File.TensorReader, an
// io.SectionReader opened on demand, so a 1 TB model costs its header in
// memory. Every count and length is checked against the bytes left in the
// file, and nothing is allocated for a count before its items are read, so
// a damaged count (or a sparse file) costs no more than the bytes really
// read; a header longer than 256 MiB (real ones hold a few MB) is refused.
// The layout (alignment, bounds, overlaps, duplicate names, shapes) is
// checked before Read returns.
// Failures wrap one of the package's sentinel errors (ErrNotGGUF,
// ErrTruncated, ErrCorrupt, ...) for errors.Is.
//
// Open opens a model from disk, either one file or a shard set named
// PREFIX-0000K-of-0000N.gguf (give any shard): it finds the other shards
// and checks split.no, split.count and split.tensors.count.
//
//	m, err := gguf.Open("model-00001-of-00003.gguf")
//	...
//	defer m.Close()
//	for i, t := range m.Tensors {
//		r := m.TensorReader(i) // t.Size bytes of t.Type, shape t.Shape
//		...
//	}
//
// Metadata keeps keys in file order with each value's exact GGUF type
// (Value), so that writing it back reproduces the file.
//
// # Writing
//
// Create takes the metadata and the tensor infos (name, shape, type) up
// front, writes the header at once and then takes each tensor's data in
// order (Writer.WriteTensor, Writer.Write, or Writer.WriteTensorFrom for
// kernel-side copies between files). The file appears under its name only
// when Close succeeds; Abort or any failure leaves nothing behind.
// HeaderSize and FileSize predict the sizes to the byte without writing.
//
//	w, err := gguf.Create(out, md, infos, &gguf.CreateOptions{Inputs: []string{in}})
//	...
//	defer w.Abort() // no-op after a successful Close
//	for i := range infos {
//		if err := w.WriteTensor(src(i)); err != nil { ... }
//	}
//	return w.Close()
package gguf
