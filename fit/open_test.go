package fit

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadNonRegular: the files fit reads (--gains, the KLD table of fit
// calibrate, --cache) must be regular files: a named pipe or a directory
// is an error naming what it is, at once. os.Open of a named pipe waits
// for a writer for ever; the rest of the code base opens its inputs with
// gguf.OpenRegular, and so do these now.
func TestLoadNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	for _, tc := range []struct {
		name string
		load func(path string) error
	}{
		{"LoadGains", func(p string) error { _, err := LoadGains(p); return err }},
		{"LoadKLD", func(p string) error { _, err := LoadKLD(p); return err }},
		{"LoadCache", func(p string) error { _, err := LoadCache(p); return err }},
	} {
		for _, path := range []string{fifo, dir} {
			done := make(chan error, 1)
			go func() { done <- tc.load(path) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), path+" is not a regular file") {
					t.Errorf("%s(%s): %v, want %q", tc.name, path, err, "is not a regular file")
				}
			case <-time.After(10 * time.Second):
				t.Errorf("%s(%s) blocks", tc.name, path)
				// Let the blocked open go on: a writer that opens and
				// closes the pipe ends it.
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					f.Close()
				}
				<-done
			}
		}
	}
	// A cache that does not exist yet is still an empty cache.
	if c, err := LoadCache(filepath.Join(dir, "new.cache")); err != nil || c.Len() != 0 {
		t.Errorf("LoadCache of a new file: %v", err)
	}
}
