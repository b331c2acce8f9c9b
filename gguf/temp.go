package gguf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Every file this project writes goes through a temporary file in the
// destination's directory, renamed into place when complete. The temporary
// name says which output and which process it belongs to:
//
//	.BASE.tmp-PID-RANDOM
//
// and the writing process holds an exclusive lock on it (flock, where the
// system has it) for as long as it writes. So after a crash or a kill -9,
// a later run on the same output can tell a stale temporary file (no lock,
// no such process) from one still being written (TempFiles).

// tempMarker separates the output's name from the process id and the
// random part.
const tempMarker = ".tmp-"

// TempPrefix is the start of the name of every temporary file of a write
// to path, in path's directory: "." + base name + ".tmp-".
func TempPrefix(path string) string {
	return "." + filepath.Base(path) + tempMarker
}

// CreateTemp creates and locks a new temporary file for a write of path, in
// path's directory, created with mode 0666 so that the umask decides the
// final permissions (as for any file a program creates). The caller writes
// it, then renames it to path or removes it.
func CreateTemp(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	prefix := TempPrefix(path) + strconv.Itoa(os.Getpid()) + "-"
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64()>>16, 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			os.Remove(name)
			return nil, err
		}
		// A stale-file sweep of another run may have taken the file between
		// its creation and the lock: then the name is no longer this file.
		if st, err := f.Stat(); err == nil {
			if now, err := os.Lstat(name); err == nil && os.SameFile(st, now) {
				return f, nil
			}
		}
		f.Close()
		if try >= 100 {
			return nil, fmt.Errorf("gguf: cannot keep a temporary file for %s", path)
		}
	}
}

// TempFile is a temporary file of a write found by TempFiles.
type TempFile struct {
	Path string
	// PID is the process that made it (0 for the names of older versions,
	// which do not record it).
	PID int
	// Size is the file's size in bytes.
	Size int64
	// Live is true when the file is being written: its lock is held or its
	// process is running. A file of an older version's name is always
	// reported live, as nothing tells.
	Live bool
}

// TempFiles lists the temporary files of writes to path: this version's
// (.BASE.tmp-PID-RANDOM, and the ..BASE.tmp-PID-RANDOM.tmp-... of a staged
// shard) and older versions' (.BASE.tmp-RANDOM, .BASE.tmpRANDOM,
// .BASE.partial-RANDOM).
func TempFiles(path string) ([]TempFile, error) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	var out []TempFile
	for _, e := range entries {
		name := e.Name()
		pid, ours, legacy := parseTempName(name, base)
		if !ours && !legacy {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		tf := TempFile{Path: filepath.Join(dir, name), PID: pid, Size: info.Size(), Live: true}
		if ours {
			tf.Live = pid == os.Getpid() || processAlive(pid) || lockedByOther(tf.Path)
		}
		out = append(out, tf)
	}
	return out, nil
}

// parseTempName recognises a temporary file of base: ours with its process
// id, or an older version's name.
func parseTempName(name, base string) (pid int, ours, legacy bool) {
	rest, ok := strings.CutPrefix(name, ".."+base)
	if !ok || !strings.HasPrefix(rest, tempMarker) {
		// Not a staged shard's own temporary file (..BASE.tmp-PID-R.tmp-PID-R).
		if rest, ok = strings.CutPrefix(name, "."+base); !ok {
			return 0, false, false
		}
	}
	switch {
	case strings.HasPrefix(rest, tempMarker):
		digits, tail, ok := strings.Cut(rest[len(tempMarker):], "-")
		if n, err := strconv.Atoi(digits); ok && err == nil && n > 0 && tail != "" {
			return n, true, false
		}
		return 0, false, rest != tempMarker
	case strings.HasPrefix(rest, ".tmp") && len(rest) > len(".tmp"), strings.HasPrefix(rest, ".partial-") && len(rest) > len(".partial-"):
		return 0, false, true
	}
	return 0, false, false
}
