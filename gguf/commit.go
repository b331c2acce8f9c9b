package gguf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrCommit is wrapped by *CommitError: complete output files were not all
// put in place under their final names.
var ErrCommit = errors.New("gguf: output not put in place")

// Staged is a complete file under a temporary name (Writer.Stage), to be
// renamed to its final name by Commit.
type Staged struct {
	Temp, Final string
	// Replace allows the rename to replace a file at Final (the user asked
	// for it: --force). Without it a file at Final is never replaced, even
	// one created after the caller checked that there was none: the commit
	// fails with an error wrapping os.ErrExist.
	Replace bool
	// Beside lists files that describe the file at Final (its sidecar).
	// They are removed before that file is replaced, so that none of them
	// describes a file that is no longer there, even if the process dies
	// in between; should that rename then fail, the file at Final has lost
	// them, which only makes it untrusted.
	Beside []string
	// Placed, when set, runs once the file is in place and before the
	// next is renamed: it writes what describes the file (its sidecar),
	// so that a process killed between two renames leaves no file in
	// place without it.
	Placed func()
}

// CommitError reports a commit that stopped part way. Nothing complete is
// removed by it: a file already put in place may have replaced one of the
// user's files, so removing it would lose both, and the others are kept
// under their temporary names for the user to move by hand.
type CommitError struct {
	// Placed lists the final names that now hold their new file.
	Placed []string
	// Failed is the final name whose rename failed, "" when every rename
	// was done (the error came after, see Err).
	Failed string
	// Kept lists the complete files not put in place, Failed's first; each
	// Final still holds what it held before the commit (an older file, or
	// nothing).
	Kept []Staged
	// Err is the cause.
	Err error
}

func (e *CommitError) Error() string {
	var b strings.Builder
	if e.Failed != "" {
		fmt.Fprintf(&b, "%v: %s: %v", ErrCommit, e.Failed, e.Err)
	} else {
		fmt.Fprintf(&b, "gguf: %v", e.Err)
	}
	if len(e.Placed) > 0 {
		fmt.Fprintf(&b, "; new, in place: %s", strings.Join(e.Placed, ", "))
	}
	if len(e.Kept) > 0 {
		finals := make([]string, len(e.Kept))
		temps := make([]string, len(e.Kept))
		for i, s := range e.Kept {
			finals[i], temps[i] = s.Final, s.Temp
		}
		if len(e.Kept) == 1 {
			fmt.Fprintf(&b, "; not replaced by this run: %s; its complete new file is kept as %s", finals[0], temps[0])
		} else {
			fmt.Fprintf(&b, "; not replaced by this run: %s; their complete new files are kept as %s", strings.Join(finals, ", "), strings.Join(temps, ", "))
		}
	}
	return b.String()
}

// Unwrap gives ErrCommit and the cause, so that errors.Is finds either
// (os.ErrExist for a file that appeared at a final name).
func (e *CommitError) Unwrap() []error { return []error{ErrCommit, e.Err} }

// Commit renames each staged file to its final name, in order, and makes
// the renames durable. The first rename that fails stops it with a
// *CommitError saying which files are new, which are as before and where
// their new files are; none is removed.
func Commit(files []Staged) error {
	for i, s := range files {
		err := place(s)
		if err == nil && s.Placed != nil {
			s.Placed()
		}
		if err != nil {
			placed := make([]string, i)
			for j, done := range files[:i] {
				placed[j] = done.Final
			}
			syncDirs(placed)
			return &CommitError{Placed: placed, Failed: s.Final, Kept: append([]Staged(nil), files[i:]...), Err: err}
		}
	}
	finals := make([]string, len(files))
	for i, s := range files {
		finals[i] = s.Final
	}
	syncDirs(finals)
	return nil
}

// place renames one staged file to its final name (see Staged), removing
// the files beside the one it replaces.
func place(s Staged) error {
	if !s.Replace {
		if err := renameNoReplace(s.Temp, s.Final); err != nil {
			return err
		}
		// Nothing was at Final: what is beside it describes no file.
		removeBeside(s.Beside)
		return nil
	}
	// A file made read-only since the caller's checks is never replaced,
	// --force or not (its owner took it back).
	if st, err := os.Stat(s.Final); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o222 == 0 {
		return &os.LinkError{Op: "rename", Old: s.Temp, New: s.Final, Err: errReadOnly}
	}
	if err := removeBeside(s.Beside); err != nil {
		return err
	}
	return os.Rename(s.Temp, s.Final)
}

// errReadOnly is why place refuses to replace a read-only file; it is a
// permission error for errors.Is.
var errReadOnly = fmt.Errorf("%w: the file is read-only and is never replaced", fs.ErrPermission)

func removeBeside(paths []string) error {
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// syncDirs makes the renames into the directories of paths durable.
func syncDirs(paths []string) {
	seen := map[string]bool{}
	for _, p := range paths {
		dir := filepath.Dir(p)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
}

// linkNoReplace renames old to new unless new exists, with a hard link
// (which fails if new exists) and the removal of old: for systems without
// an atomic no-replace rename. A file system without hard links gets a
// check and a plain rename, the best it allows: a file created at new
// between the two is replaced.
func linkNoReplace(old, new string) error {
	err := os.Link(old, new)
	if err == nil {
		// The file is in place; should the old name stay, it is one more
		// name of the same complete file, which a stale-file sweep removes.
		os.Remove(old)
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
	}
	if _, err := os.Lstat(new); err == nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(old, new)
}
