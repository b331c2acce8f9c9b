package gguf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// encoder lays out a header the way the reference's gguf_write_to_buf does.
// With count set it only adds up sizes, so HeaderSize allocates nothing.
type encoder struct {
	buf   []byte
	n     int64
	count bool
}

func (e *encoder) raw(p []byte) {
	e.n += int64(len(p))
	if !e.count {
		e.buf = append(e.buf, p...)
	}
}

func (e *encoder) u8(v uint8) {
	e.n++
	if !e.count {
		e.buf = append(e.buf, v)
	}
}

func (e *encoder) u16(v uint16) {
	e.n += 2
	if !e.count {
		e.buf = binary.LittleEndian.AppendUint16(e.buf, v)
	}
}

func (e *encoder) u32(v uint32) {
	e.n += 4
	if !e.count {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, v)
	}
}

func (e *encoder) u64(v uint64) {
	e.n += 8
	if !e.count {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, v)
	}
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.n += int64(len(s))
	if !e.count {
		e.buf = append(e.buf, s...)
	}
}

func (e *encoder) scalar(typ ValueType, bits uint64) {
	switch typ.size() {
	case 1:
		e.u8(uint8(bits))
	case 2:
		e.u16(uint16(bits))
	case 4:
		e.u32(uint32(bits))
	default:
		e.u64(bits)
	}
}

func (e *encoder) value(v Value) error {
	if !v.ok {
		return errors.New("invalid (zero) value")
	}
	switch v.typ {
	case TypeString:
		e.str(v.str)
	case TypeArray:
		return e.array(v)
	default:
		if !v.typ.Valid() {
			return fmt.Errorf("unknown value type %d", uint32(v.typ))
		}
		e.scalar(v.typ, v.bits)
	}
	return nil
}

func (e *encoder) array(v Value) error {
	e.u32(uint32(v.elem))
	e.u64(uint64(v.n))
	if size := v.elem.size(); size > 0 && e.count {
		e.n += int64(v.n) * size
		return nil
	}
	switch s := v.arr.(type) {
	case []string:
		for _, x := range s {
			e.str(x)
		}
	case []Value:
		for i, x := range s {
			if x.typ != TypeArray {
				return fmt.Errorf("element %d of an array of arrays is a %s", i, x.typ)
			}
			if err := e.array(x); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case []uint8:
		e.raw(s)
	case []bool:
		for _, x := range s {
			if x {
				e.u8(1)
			} else {
				e.u8(0)
			}
		}
	default:
		for i := 0; i < v.n; i++ {
			x := v.Elem(i)
			e.scalar(x.typ, x.bits)
		}
	}
	return nil
}

// header encodes the whole header, padding included. It fills in each
// tensor's Offset and Size the way gguf_add_tensor does: each tensor starts
// at the previous one's end rounded up to the alignment.
func encodeHeader(e *encoder, version uint32, md Metadata, tensors []TensorInfo) (int64, error) {
	a, err := alignment(md)
	if err != nil {
		return 0, err
	}
	e.raw([]byte(Magic))
	e.u32(version)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(md)))
	seen := make(map[string]bool, len(md))
	for _, kv := range md {
		if seen[kv.Key] {
			return 0, fmt.Errorf("%w: metadata key %q appears twice", ErrWriter, kv.Key)
		}
		seen[kv.Key] = true
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		if err := e.value(kv.Value); err != nil {
			return 0, fmt.Errorf("%w: metadata key %q: %w", ErrWriter, kv.Key, err)
		}
	}
	names := make(map[string]bool, len(tensors))
	offset := int64(0)
	for i := range tensors {
		t := &tensors[i]
		if names[t.Name] {
			return 0, fmt.Errorf("%w %q", ErrDuplicateTensor, t.Name)
		}
		names[t.Name] = true
		size, err := t.Type.TensorSize(t.Shape)
		if err != nil {
			return 0, fmt.Errorf("%w: tensor %q: %w", ErrWriter, t.Name, err)
		}
		if t.Size != 0 && t.Size != size {
			return 0, fmt.Errorf("%w: tensor %q: Size %d, but a %s tensor of shape %v takes %d bytes", ErrWriter, t.Name, t.Size, t.Type, t.Shape, size)
		}
		t.Size, t.Offset = size, offset
		if offset > math.MaxInt64-size-a {
			return 0, fmt.Errorf("%w: data section overflows at tensor %q", ErrWriter, t.Name)
		}
		offset += align(size, a)

		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.Type))
		e.u64(uint64(t.Offset))
	}
	if pad := align(e.n, a) - e.n; pad > 0 {
		e.raw(make([]byte, pad))
	}
	return a, nil
}

// HeaderSize returns the exact size in bytes of the header a Writer writes
// for md and tensors, padding to the alignment included: the offset at which
// the first tensor's data starts.
func HeaderSize(md Metadata, tensors []TensorInfo) (int64, error) {
	e := &encoder{count: true}
	if _, err := encodeHeader(e, Version, md, slicesClone(tensors)); err != nil {
		return 0, err
	}
	return e.n, nil
}

// FileSize returns the exact size of the file a Writer writes for md and
// tensors: the header, then each tensor's data padded to the alignment.
func FileSize(md Metadata, tensors []TensorInfo) (int64, error) {
	e := &encoder{count: true}
	ts := slicesClone(tensors)
	a, err := encodeHeader(e, Version, md, ts)
	if err != nil {
		return 0, err
	}
	size := e.n
	if n := len(ts); n > 0 {
		size += ts[n-1].Offset + align(ts[n-1].Size, a)
	}
	return size, nil
}

// Layout returns where a Writer puts each tensor for md and tensors: the
// data section's start (the header's size) and the tensor infos with their
// Offset (relative to the data section) and Size filled in, as Create and
// FileSize compute them.
func Layout(md Metadata, tensors []TensorInfo) (dataOffset int64, laid []TensorInfo, err error) {
	e := &encoder{count: true}
	laid = slicesClone(tensors)
	if _, err := encodeHeader(e, Version, md, laid); err != nil {
		return 0, nil, err
	}
	return e.n, laid, nil
}

func slicesClone(ts []TensorInfo) []TensorInfo { return append([]TensorInfo(nil), ts...) }

// CreateOptions adjusts Create. The zero value (or nil) is fine.
type CreateOptions struct {
	// Inputs are files the output must not overwrite; Create fails with
	// ErrSameFile if the output path names one of them (by os.SameFile, so
	// links and other spellings of the path are caught).
	Inputs []string
	// Version is the GGUF version to write: 2 or 3 (default 3).
	Version uint32
	// Perm, when set, is the permission of the final file. By default the
	// file is created with 0666 and the umask decides, as for any file a
	// program creates.
	Perm os.FileMode
	// Context, when set, stops the write once it is done (an interrupt):
	// the next Write, WriteTensor or Close fails with its error and the
	// temporary file is removed.
	Context context.Context
	// NoReplace: Close never replaces a file at the path, even one created
	// after the caller checked that there was none (see Staged.Replace).
	NoReplace bool
}

// Writer writes one GGUF file: the header at Create, then each tensor's data
// in the order given, with zero padding to the alignment after each tensor.
// The file is written under a temporary name in the destination directory
// and renamed into place by Close, so the destination never holds a partial
// file; Abort, or any failed write, removes the temporary file. Once the
// file is complete it is never removed (see CommitError).
//
// A Writer is not safe for concurrent use.
type Writer struct {
	path, tmp string
	f         *os.File
	tensors   []TensorInfo
	alignment int64
	cur       int   // tensor being written
	done      int64 // bytes of it written so far
	unkicked  int64 // bytes written since the last startWriteback
	err       error // first failure; the Writer is then finished
	ctx       context.Context
	noReplace bool
}

// Create starts writing a GGUF file at path with metadata md and the given
// tensors (name, shape and type; Offset and Size are computed, see Tensors).
// The header is written at once; then call WriteTensor (or Write) for each
// tensor in order, then Close.
func Create(path string, md Metadata, tensors []TensorInfo, opts *CreateOptions) (*Writer, error) {
	var o CreateOptions
	if opts != nil {
		o = *opts
	}
	if o.Version == 0 {
		o.Version = Version
	}
	if o.Version != 2 && o.Version != 3 {
		return nil, fmt.Errorf("%w: cannot write version %d", ErrVersion, o.Version)
	}
	for _, in := range o.Inputs {
		same, err := SameFile(path, in)
		if err != nil {
			return nil, err
		}
		if same {
			return nil, fmt.Errorf("%w: %s is %s", ErrSameFile, path, in)
		}
	}
	ts := slicesClone(tensors)
	e := &encoder{}
	a, err := encodeHeader(e, o.Version, md, ts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := CreateTemp(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	w := &Writer{path: path, tmp: f.Name(), f: f, tensors: ts, alignment: a, ctx: o.Context, noReplace: o.NoReplace}
	if o.Perm != 0 {
		if err := f.Chmod(o.Perm); err != nil {
			return nil, w.fail(err)
		}
	}
	if _, err := f.Write(e.buf); err != nil {
		return nil, w.fail(err)
	}
	return w, nil
}

// Tensors returns the tensor infos being written, with their Offset and
// Size filled in. The slice belongs to the Writer: do not modify it.
func (w *Writer) Tensors() []TensorInfo { return w.tensors }

// Path is the final name of the file.
func (w *Writer) Path() string { return w.path }

// check returns the Writer's error, or fails it when its context is done.
func (w *Writer) check() error {
	if w.err != nil {
		return w.err
	}
	if w.ctx != nil {
		if err := w.ctx.Err(); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// fail records the first error, removes the temporary file and returns the
// error with context.
func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = fmt.Errorf("gguf: writing %s: %w", w.path, err)
		if w.f != nil {
			w.f.Close()
			os.Remove(w.tmp)
			w.f = nil
		}
	}
	return w.err
}

// finishTensor writes the padding after the current tensor and moves on.
func (w *Writer) finishTensor() error {
	t := &w.tensors[w.cur]
	if pad := align(t.Size, w.alignment) - t.Size; pad > 0 {
		var zeros [256]byte
		for pad > 0 {
			n := min(pad, int64(len(zeros)))
			if _, err := w.f.Write(zeros[:n]); err != nil {
				return w.fail(err)
			}
			pad -= n
		}
	}
	w.cur++
	w.done = 0
	return nil
}

// writebackEvery is how many bytes Write writes between asking the kernel to
// start writing them to the disk (startWriteback).
const writebackEvery = 8 << 20

// Write appends p to the tensor data: the concatenation of every tensor's
// bytes in order, without padding (the Writer pads). p may end in the middle
// of a tensor or span several.
func (w *Writer) Write(p []byte) (int, error) {
	if err := w.check(); err != nil {
		return 0, err
	}
	written := 0
	for len(p) > 0 {
		if w.cur >= len(w.tensors) {
			return written, w.fail(fmt.Errorf("%w: %d bytes more than the tensors hold", ErrWriter, len(p)))
		}
		t := &w.tensors[w.cur]
		n := min(int64(len(p)), t.Size-w.done)
		m, err := writeData(w.f, p[:n])
		written += m
		if err != nil {
			return written, w.fail(err)
		}
		if w.unkicked += n; w.unkicked >= writebackEvery {
			startWriteback(w.f)
			w.unkicked = 0
		}
		w.done += n
		p = p[n:]
		if w.done == t.Size {
			if err := w.finishTensor(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// WriteTensor writes the next tensor's data: exactly its Size bytes from r.
// It copies with io.Copy straight onto the *os.File, so when r is an
// *os.File or an *io.LimitedReader over one the kernel copies the bytes
// (copy_file_range) without passing them through user space.
func (w *Writer) WriteTensor(r io.Reader) error {
	if err := w.check(); err != nil {
		return err
	}
	if w.cur >= len(w.tensors) {
		return w.fail(fmt.Errorf("%w: all %d tensors are already written", ErrWriter, len(w.tensors)))
	}
	if w.done != 0 {
		return w.fail(fmt.Errorf("%w: WriteTensor in the middle of tensor %q", ErrWriter, w.tensors[w.cur].Name))
	}
	t := &w.tensors[w.cur]
	src := r
	if lr, ok := r.(*io.LimitedReader); !ok || lr.N > t.Size {
		// Wrapping an *io.LimitedReader again would hide the *os.File from
		// os.File.ReadFrom, so only wrap when needed.
		src = &io.LimitedReader{R: r, N: t.Size}
	}
	n, err := io.Copy(w.f, src)
	if err != nil {
		return w.fail(fmt.Errorf("tensor %q: %w", t.Name, err))
	}
	if n != t.Size {
		return w.fail(fmt.Errorf("%w: tensor %q: got %d bytes of %d", ErrWriter, t.Name, n, t.Size))
	}
	startWriteback(w.f)
	w.unkicked = 0
	w.done = n
	return w.finishTensor()
}

// WriteTensorFrom writes the next tensor's data from src starting at the
// absolute offset (see Model.TensorFile), letting the kernel copy it. It
// moves src's file position, so src must not be read by Read or Seek
// elsewhere at the same time (ReadAt and SectionReaders are fine).
func (w *Writer) WriteTensorFrom(src *os.File, offset int64) error {
	if err := w.check(); err != nil {
		return err
	}
	if _, err := src.Seek(offset, io.SeekStart); err != nil {
		return w.fail(err)
	}
	size := int64(0)
	if w.cur < len(w.tensors) {
		size = w.tensors[w.cur].Size
	}
	return w.WriteTensor(&io.LimitedReader{R: src, N: size})
}

// Close checks that every tensor was written, flushes the file to disk and
// renames it to its final name. After a failure to write, the temporary
// file is gone and the final name untouched. A complete file is never
// removed: if the rename fails (with NoReplace, a file appeared at the
// path), it stays under its temporary name, and if closing fails after the
// rename, it stays in place; either way the error is a *CommitError that
// says so.
func (w *Writer) Close() error {
	if err := w.complete(); err != nil {
		return err
	}
	s := Staged{Temp: w.tmp, Final: w.path, Replace: !w.noReplace}
	if renameOpen {
		// Rename while the file is open and locked, so that no sweep for
		// stale temporary files can take it before it is in place.
		err := place(s)
		closeErr := w.f.Close()
		w.f = nil
		w.err = fmt.Errorf("%w: %s is already closed", ErrWriter, w.path)
		if err != nil {
			return &CommitError{Failed: w.path, Kept: []Staged{s}, Err: err}
		}
		if closeErr != nil {
			// The file was synced whole, and it may have replaced an
			// earlier one: removing it would lose both.
			return &CommitError{Placed: []string{w.path}, Err: fmt.Errorf("closing %s, in place: %w", w.path, closeErr)}
		}
	} else {
		if _, err := w.stage(); err != nil {
			return err
		}
		w.err = fmt.Errorf("%w: %s is already closed", ErrWriter, w.path)
		if err := place(s); err != nil {
			return &CommitError{Failed: w.path, Kept: []Staged{s}, Err: err}
		}
	}
	syncDirs([]string{w.path})
	return nil
}

// Stage checks that every tensor was written, flushes the file to disk and
// closes it under its temporary name, for Commit to rename with others. The
// file is then the caller's: Abort no longer removes it.
func (w *Writer) Stage() (Staged, error) {
	if err := w.complete(); err != nil {
		return Staged{}, err
	}
	s, err := w.stage()
	if err != nil {
		return Staged{}, err
	}
	w.err = fmt.Errorf("%w: %s is staged as %s", ErrWriter, w.path, w.tmp)
	return s, nil
}

// complete fails the Writer unless every tensor was written and synced.
func (w *Writer) complete() error {
	if err := w.check(); err != nil {
		return err
	}
	if w.cur < len(w.tensors) {
		t := w.tensors[w.cur]
		return w.fail(fmt.Errorf("%w: closed at tensor %d of %d (%q, %d of %d bytes written)", ErrWriter, w.cur+1, len(w.tensors), t.Name, w.done, t.Size))
	}
	if err := w.f.Sync(); err != nil {
		return w.fail(err)
	}
	return nil
}

// stage closes the complete file under its temporary name.
func (w *Writer) stage() (Staged, error) {
	if err := w.f.Close(); err != nil {
		w.f = nil
		os.Remove(w.tmp)
		return Staged{}, w.fail(err)
	}
	w.f = nil
	return Staged{Temp: w.tmp, Final: w.path, Replace: !w.noReplace}, nil
}

// Abort stops writing and removes the temporary file; the final name is
// never touched. It is safe to call after Close or a failure (it then does
// nothing), so `defer w.Abort()` is the usual pattern.
func (w *Writer) Abort() error {
	if w.err != nil {
		return nil
	}
	w.fail(fmt.Errorf("%w: aborted", ErrWriter))
	return nil
}

// SameFile reports whether paths a and b name the same existing file
// (os.SameFile). A path that does not exist is the same as nothing.
func SameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("gguf: %w", err)
	}
	sb, err := os.Stat(b)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("gguf: %w", err)
	}
	return os.SameFile(sa, sb), nil
}
