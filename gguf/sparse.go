package gguf

import "io"

// SkipRemaining leaves the data of every tensor not yet written as a hole:
// the file gets its full size, but nothing is written (a sparse file whose
// tensors read as zeros). It makes header-only models of any size for tests
// and planning.
func (w *Writer) SkipRemaining() error {
	if w.err != nil {
		return w.err
	}
	pos, err := w.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return w.fail(err)
	}
	end := pos
	for i := w.cur; i < len(w.tensors); i++ {
		end += align(w.tensors[i].Size, w.alignment)
	}
	end -= w.done
	if err := w.f.Truncate(end); err != nil {
		return w.fail(err)
	}
	if _, err := w.f.Seek(end, io.SeekStart); err != nil {
		return w.fail(err)
	}
	w.cur, w.done = len(w.tensors), 0
	return nil
}
