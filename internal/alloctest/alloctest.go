// Package alloctest holds what the tests of the readers need to show that a
// count or length read from a file is never trusted for memory: a huge
// sparse file, a reader cut short of the size it claims, and the bytes a
// call allocates.
package alloctest

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Allocated returns the bytes fn allocates.
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// SparseFile writes the pieces at their offsets into a file of size bytes
// in a temporary directory and opens it; what is not written reads as
// zeros and takes no disk. It skips the test where the file system cannot
// hold such a file.
func SparseFile(t testing.TB, size int64, pieces map[int64][]byte) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Skipf("cannot make a %d-byte sparse file here: %v", size, err)
	}
	for off, b := range pieces {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// ShortReader holds the first bytes of a file that claims to be larger: a
// file truncated (or shrunk) after its size was taken.
type ShortReader []byte

func (r ShortReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r)) {
		return 0, io.EOF
	}
	n := copy(p, r[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
