package gguf

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotRegular is wrapped by OpenRegular's error for a path that is not a
// regular file (a directory, a named pipe, a device): like a missing file,
// a file that cannot be read, which callers tell from one whose contents
// are wrong.
var ErrNotRegular = errors.New("not a regular file")

// notRegularError keeps OpenRegular's message ("PATH is not a regular file
// (a directory)") while it wraps ErrNotRegular.
type notRegularError struct{ path, kind string }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s)", e.path, e.kind)
}

func (e *notRegularError) Unwrap() error { return ErrNotRegular }

// OpenRegular opens path for reading after checking that it is a regular
// file (following links): a named pipe, a device or a directory is an
// error naming what it is, never an open that blocks or reads forever. It
// returns the file and its size.
func OpenRegular(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, &notRegularError{path, fileKind(st.Mode())}
	}
	// Non-blocking where the system has it, in case the file was replaced
	// by a named pipe since the check; a regular file is unaffected.
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, &notRegularError{path, fileKind(st.Mode())}
	}
	return f, st.Size(), nil
}

// ReadRegular reads a whole regular file (see OpenRegular).
func ReadRegular(path string) ([]byte, error) {
	f, size, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && size > 0 {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// fileKind names a non-regular file type for messages.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.Type().String()
}
