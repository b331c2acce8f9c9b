package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A write can outlive its process: a caller that records, durably, which
// tensors of the temporary file are complete (Sync after each, then its own
// record) can keep the file when it stops (Detach) or find it after a
// crash, and continue it in a later process (Resume) instead of starting
// over.

// ErrResume is wrapped by Resume's errors: the temporary file cannot be
// continued as the write asked for.
var ErrResume = errors.New("gguf: cannot resume")

// TempPath is the temporary file being written.
func (w *Writer) TempPath() string { return w.tmp }

// Next is the index of the tensor the next Write or WriteTensor writes;
// len(Tensors()) once every tensor is written.
func (w *Writer) Next() int { return w.cur }

// Sync flushes what was written so far to the disk (fsync), so that a
// record saying which tensors are complete may be written after it.
func (w *Writer) Sync() error {
	if err := w.check(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return w.fail(err)
	}
	return nil
}

// Detach stops writing and keeps the temporary file, closed (so unlocked),
// for Resume in a later run; the final name is never touched. It does
// nothing after Close or a failure.
func (w *Writer) Detach() error {
	if w.err != nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	w.err = fmt.Errorf("%w: %s was detached", ErrWriter, w.tmp)
	return err
}

// RewindTensor drops the bytes of the current tensor written so far, so
// that it can be written again from its start.
func (w *Writer) RewindTensor() error {
	if err := w.check(); err != nil {
		return err
	}
	if w.done == 0 {
		return nil
	}
	pos, err := w.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return w.fail(err)
	}
	start := pos - w.done
	if err := w.f.Truncate(start); err != nil {
		return w.fail(err)
	}
	if _, err := w.f.Seek(start, io.SeekStart); err != nil {
		return w.fail(err)
	}
	w.done = 0
	return nil
}

// takenOver says why a temporary file of path chosen to be continued is no
// longer there.
func takenOver(path string) string {
	return "it is gone: another run of " + path + " took it over (it writes it now) or removed it"
}

// Resume continues the write of path from tmp, a temporary file an earlier
// Writer of path left (see TempFiles), at tensor next: md and tensors must
// give the very header tmp starts with, and the caller vouches that
// tensors 0..next-1 are complete in it (it synced and recorded them). The
// file is locked, cut after tensor next-1 and its padding, and renamed to a
// temporary name of this process; the Writer then goes on as Create's.
func Resume(path, tmp string, md Metadata, tensors []TensorInfo, next int, opts *CreateOptions) (*Writer, error) {
	var o CreateOptions
	if opts != nil {
		o = *opts
	}
	if o.Version == 0 {
		o.Version = Version
	}
	for _, in := range o.Inputs {
		if same, err := SameFile(path, in); err != nil {
			return nil, err
		} else if same {
			return nil, fmt.Errorf("%w: %s is %s", ErrSameFile, path, in)
		}
	}
	ts := slicesClone(tensors)
	e := &encoder{}
	a, err := encodeHeader(e, o.Version, md, ts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if next < 0 || next > len(ts) {
		return nil, fmt.Errorf("%w %s: tensor %d of %d", ErrResume, tmp, next, len(ts))
	}
	end := int64(len(e.buf))
	if next > 0 {
		last := ts[next-1]
		end += last.Offset + align(last.Size, a)
	}
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		// Between the choice of tmp and now, another run of the same
		// output (a part started twice) continued it under a name of its
		// own, or removed it: say so rather than "no such file".
		return nil, fmt.Errorf("%w %s: %s", ErrResume, tmp, takenOver(path))
	}
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	if err := lockFile(f); err != nil {
		return nil, fmt.Errorf("%w %s: it is locked by another process: %w", ErrResume, tmp, err)
	}
	// A stale-file sweep may have removed the name before the lock.
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if now, err := os.Lstat(tmp); err != nil || !os.SameFile(st, now) {
		return nil, fmt.Errorf("%w %s: %s", ErrResume, tmp, takenOver(path))
	}
	if st.Size() < end {
		return nil, fmt.Errorf("%w %s: %d bytes, tensor %d ends at %d", ErrResume, tmp, st.Size(), next, end)
	}
	hdr := make([]byte, len(e.buf))
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", tmp, err)
	}
	if !bytes.Equal(hdr, e.buf) {
		return nil, fmt.Errorf("%w %s: its header is not the one planned for %s", ErrResume, tmp, path)
	}
	if err := f.Truncate(end); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	// Renamed to a name of this process: the name tells who writes the file.
	dir, prefix := filepath.Dir(path), TempPrefix(path)
	name := ""
	for try := 0; try < 100; try++ {
		token := NewTempToken()
		cand := filepath.Join(dir, prefix+token)
		if _, err := os.Lstat(cand); errors.Is(err, os.ErrNotExist) {
			name = cand
			break
		}
		forgetTempToken(token) // the file there is not this process's
	}
	if name == "" {
		return nil, fmt.Errorf("gguf: cannot name a temporary file for %s", path)
	}
	if o.Perm != 0 {
		if err := f.Chmod(o.Perm); err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
	}
	if err := os.Rename(tmp, name); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	ok = true
	return &Writer{path: path, tmp: name, f: f, tensors: ts, alignment: a, cur: next, ctx: o.Context, noReplace: o.NoReplace}, nil
}

// EncodeHeader returns the header bytes a Writer writes for md and tensors
// (GGUF version 3, padding included), as Create would.
func EncodeHeader(md Metadata, tensors []TensorInfo) ([]byte, error) {
	e := &encoder{}
	if _, err := encodeHeader(e, Version, md, slicesClone(tensors)); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// Locked reports whether a writer holds the lock of the temporary file at
// path (in this process or another): false for a file whose writer is gone
// or detached.
func Locked(path string) bool { return lockedByOther(path) }
