package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gquant/gquant/gguf"
)

// WriteFile writes data to path through a temporary file in the same
// directory (gguf.CreateTemp: locked while written, created 0666 so the
// umask decides the permissions) renamed into place, so path never holds a
// partial file.
func WriteFile(path string, data []byte) error {
	f, err := gguf.CreateTemp(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Closed, the file is no longer locked, but a sweep of another run
		// still sees this process alive and leaves it.
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
