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
// partial file. Without replace (no --force) a file at path is never
// replaced, even one that appeared after the command's checks: the error
// then wraps os.ErrExist and names the temporary file kept (gguf.Commit).
func WriteFile(path string, data []byte, replace bool) error {
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
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	// Closed, the file is no longer locked, but a sweep of another run
	// still sees this process alive and leaves it.
	if err := gguf.Commit([]gguf.Staged{{Temp: tmp, Final: path, Replace: replace}}); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
