package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gquant/gquant/gguf"
)

// Preview runs Check's checks for a command that writes nothing (quantize
// --dry-run, gquant plan), without Check's effects: no stale temporary
// file is swept. It returns the first refusal the run would meet. An
// output that exists, which the run replaces only with Force, is no
// refusal (planning over an earlier output is common): Preview notes it
// on log.
func (f *Files) Preview(log io.Writer) error {
	for i, o := range f.Outputs {
		switch err := f.checkOne(i, o); {
		case errors.Is(err, ErrExists):
			fmt.Fprintf(log, "note: %s exists: the run replaces it only with --force\n", Escape(o.Path))
		case err != nil:
			return err
		}
		if err := CheckBusy(o.paths()...); err != nil {
			return err
		}
	}
	if err := CheckBusy(f.Kept...); err != nil {
		return err
	}
	return checkSpace(f.Outputs, f.freeFunc())
}

// MakeOutputDirs creates the missing directories of the outputs, for a
// command with MakeDirs whose writer does not create them itself; call it
// after Check.
func (f *Files) MakeOutputDirs() error {
	for _, o := range f.Outputs {
		if err := os.MkdirAll(filepath.Dir(o.Path), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Existed reports whether the output at path was there when Check ran
// (and was accepted: Force, or an output the command may replace). A
// command replacing such a file at the end replaces only what it was
// allowed to: one that appeared later is refused (gguf.Commit).
func (f *Files) Existed(path string) bool {
	for i, o := range f.Outputs {
		if o.Path == path && i < len(f.before) {
			return f.before[i] != nil
		}
	}
	return false
}

// CheckBusy fails, as Check would, if another process is writing one of
// paths (ErrBusy). It removes nothing: a command that looks at the
// outputs' temporary files before Check (quantize --resume) calls it
// first.
func CheckBusy(paths ...string) error {
	for _, p := range paths {
		if temps, err := gguf.TempFiles(p); err == nil {
			if err := checkBusy(p, temps); err != nil {
				return err
			}
		}
	}
	return nil
}
